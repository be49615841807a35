/**
 * The boundaries between a service's wings, read from its import statements.
 *
 * A wing is a top-level folder of the service's src/ (migrations/ is not one); files directly in
 * src/ are the composition roots and may import anything. The rules:
 *
 * - entry: a file of wing A imports wing B through `../B/index.js` only, never B's other files;
 * - calls: each wing's index.ts opens with a header comment saying what the wing owns and a line
 *   `May call: <wing>, <wing>` (or `May call: nothing`); a wing imports only the wings it lists,
 *   and lists only wings that exist;
 * - cycles: no cycle between wings, except through an edge allowed below with its reason;
 * - layers: a repository (`*-repository.ts`) never imports a route or page (`*-route(s).ts`,
 *   `*-page(s).ts`, `*-form.ts`);
 * - oidc-provider: imported only by the `oidc` wing (decision 0013: oidc-provider beyond its
 *   documented configuration is used in one module, `oidc/oidc-provider-internals.ts`, and its
 *   patching calls appear nowhere else), the other importers listed below with their reasons;
 * - storage: the database and Redis clients only from repositories, the `platform` wing, the
 *   composition roots and migrations, the other importers listed below with their reasons.
 *
 * Adding a service is one entry in SERVICE_WING_RULES.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './repo-paths.js';

/** What a service's wings are allowed beyond the rules above, each with the reason it is allowed. */
export interface WingExceptions {
  /** Wing edges `from -> to` that close a cycle, each with why it is not cut yet. */
  cycleEdges?: Record<string, string>;
  /** Files (relative to src/) outside the oidc wing that import oidc-provider, and why. */
  oidcProviderImporters?: Record<string, string>;
  /** Files (relative to src/) outside repositories, platform and roots that import a storage client, and why. */
  storageImporters?: Record<string, string>;
}

/** Folders of src/ that are not wings. */
export const NOT_WINGS = ['migrations'];
/** The wing that owns oidc-provider. */
export const PROVIDER_WING = 'oidc';
/** The wing of platform plumbing, allowed the storage clients. */
export const PLATFORM_WING = 'platform';
/** The storage clients: the database (knex and pg, through @plant/shared/db) and Redis. */
export const STORAGE_MODULES = ['ioredis', 'knex', 'pg', '@plant/shared/db', '@plant/shared/redis'];
/** Names of a storage module that classify an error and open no connection: free to import. */
export const STORAGE_FREE_NAMES: Record<string, string[]> = {
  '@plant/shared/db': ['isDatabaseUnavailable'],
};
/** The oidc-provider patches decision 0013 keeps in its one module (code, not comments). */
export const PROVIDER_INTERNALS = [
  /\.Client\.prototype\b/,
  /\bclients?\.find\s*=/i,
  /\bcompareClientSecret\s*=/,
  /Object\.defineProperty\(\s*\w+\s*,\s*['"](issuer|href)['"]/,
];
export const PROVIDER_INTERNALS_MODULE = 'oidc/oidc-provider-internals.ts';

const REPOSITORY = /-repository\.ts$/;
const ROUTE_OR_PAGE = /-(routes?|pages?|form)\.ts$/;

const platformCycle =
  'the platform holds what every wing uses (errors, the identity context, route helpers); the ' +
  "identity context, the composition's shape every use case is handed, names the keys and the " +
  'publisher it holds by their types';

/** The services whose wings are checked, with their allowed exceptions. */
export const SERVICE_WING_RULES: Record<string, WingExceptions> = {
  'account-admin': {
    storageImporters: {
      'sessions/session-store.ts':
        'the portal sessions, their per-person index and step-up marks live in Redis: the store is the client',
    },
  },
  'token-service': {
    cycleEdges: {
      'platform -> credentials': platformCycle,
      'platform -> revocation': platformCycle,
      'platform -> signing-keys': platformCycle,
      'credentials -> client-auth':
        "a new key's algorithm and a trust's issuer URL are checked by client-auth's rules (algFits, urlProblem), which belong with the credentials they check",
      'service-accounts -> credentials':
        "an account's view shows its credentials, creating one generates its secret, and each change is published to the credential cache: an account and its credentials are one aggregate cut in two",
    },
    oidcProviderImporters: {
      'grants/grant-engine.ts':
        'builds the one Provider of every realm and its realm-bound ExternalSigningKey (decision 0005); the patching itself goes through oidc-provider-internals',
      'grants/service-account-clients.ts':
        "raises oidc-provider's documented error classes inside its token endpoint and reads Provider.ctx",
      'signing-keys/signing-key.ts':
        "a realm's key is an ExternalSigningKey, the class oidc-provider signs through",
      'sign-in/interaction-kit.ts': "types only: the interaction oidc-provider's API returns",
      'sign-in/sign-in-policy.ts':
        "the login checks are oidc-provider's documented interactionPolicy Check objects",
      'platform/errors.ts':
        "the catalogue's token-endpoint refusals subclass oidc-provider's documented error classes",
    },
    storageImporters: {
      'quotas/grant-quota-counter.ts': 'the Redis counter of grant quotas is the store itself',
      'revocation/revocation-publisher.ts': 'publishes revocation events on Redis (decision 0002)',
      'realms/realm-lock.ts': "the realm's row lock, taken inside the caller's transaction",
      'service-accounts/account-change.ts':
        "a change to an account and its signals in one transaction of the caller's",
      'signal-outbox/signal-outbox.ts':
        "the Shared Signals outbox, written in the caller's transaction",
      'signals/signal-notifications.ts': 'listens for outbox rows on a database connection',
    },
  },
};

export interface ImportOf {
  /** The importing file, relative to src/ with forward slashes. */
  file: string;
  specifier: string;
  /** The names taken (`default` for a default import, `*` for a namespace or `export *`). */
  names: string[];
  typeOnly: boolean;
  line: number;
}

/** The names an import or export-from declaration takes (`default`, `*` for a namespace or `export *`). */
function namesOf(node: ts.ImportDeclaration | ts.ExportDeclaration): string[] {
  if (ts.isExportDeclaration(node)) {
    const clause = node.exportClause;
    return clause && ts.isNamedExports(clause)
      ? clause.elements.map((el) => (el.propertyName ?? el.name).text)
      : ['*'];
  }
  const clause = node.importClause;
  const bindings = clause?.namedBindings;
  const names = clause?.name ? ['default'] : [];
  if (bindings && ts.isNamespaceImport(bindings)) return [...names, '*'];
  if (bindings) names.push(...bindings.elements.map((el) => (el.propertyName ?? el.name).text));
  return names;
}

/** The module a node imports, with its names and whether only types; undefined for any other node. */
function importOfNode(
  node: ts.Node,
): { spec: ts.Expression; names: string[]; typeOnly: boolean } | undefined {
  if (ts.isImportDeclaration(node)) {
    const typeOnly = node.importClause?.isTypeOnly ?? false;
    return { spec: node.moduleSpecifier, names: namesOf(node), typeOnly };
  }
  if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
    return { spec: node.moduleSpecifier, names: namesOf(node), typeOnly: node.isTypeOnly };
  }
  if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
    return { spec: node.moduleReference.expression, names: ['*'], typeOnly: node.isTypeOnly };
  }
  const dynamic = ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword;
  return dynamic && node.arguments[0]
    ? { spec: node.arguments[0], names: ['*'], typeOnly: false }
    : undefined;
}

/** Every import, export-from, dynamic import and import-equals of a TypeScript source. */
export function importsOf(file: string, text: string): ImportOf[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: ImportOf[] = [];
  const visit = (node: ts.Node): void => {
    const imp = importOfNode(node);
    if (imp && ts.isStringLiteralLike(imp.spec)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({
        file,
        specifier: imp.spec.text,
        names: imp.names,
        typeOnly: imp.typeOnly,
        line,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The .ts files under `dir`, relative to it with forward slashes. */
export function sourceFiles(dir: string): string[] {
  const walk = (d: string): string[] =>
    readdirSync(join(dir, d), { withFileTypes: true }).flatMap((e) => {
      const rel = d ? `${d}/${e.name}` : e.name;
      if (e.isDirectory()) return walk(rel);
      return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
    });
  return walk('').sort();
}

/** The wing of a src-relative path, or undefined for a composition root or a migration. */
export function wingOf(file: string): string | undefined {
  const [top, ...rest] = file.split('/');
  return rest.length > 0 && top && !NOT_WINGS.includes(top) ? top : undefined;
}

/** A relative specifier of `from` as a src-relative .ts path (may point outside src/). */
function resolveRelative(from: string, specifier: string): string {
  return posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
}

/** The `May call:` line of a wing's index.ts header comment: the wings listed, or undefined when absent. */
export function mayCallOf(indexText: string): string[] | undefined {
  const header = indexText.match(/^\s*\/\*[\s\S]*?\*\//)?.[0];
  const line = header?.match(/^[\s*]*May call:\s*(.+?)\s*(\*\/)?$/m)?.[1];
  if (line === undefined) return undefined;
  if (line.trim() === 'nothing') return [];
  return line
    .split(',')
    .map((w) => w.trim().replace(/\.$/, ''))
    .filter(Boolean);
}

export interface Violation {
  file: string;
  specifier: string;
  rule: 'entry' | 'calls' | 'cycles' | 'layers' | 'oidc-provider' | 'storage' | 'exceptions';
  message: string;
}

/** `file:line imports 'specifier': message [rule]`, one line. */
export const describeViolation = (v: Violation): string =>
  `${v.file} imports '${v.specifier}': ${v.message} [${v.rule}]`;

interface Checked {
  violations: Violation[];
  /** The wing graph: wing -> wings it imports. */
  edges: Map<string, Set<string>>;
}

/** What the steps of a check share: the tree, its wings and their May call lists, what they found. */
interface Run {
  srcDir: string;
  exceptions: WingExceptions;
  wings: Set<string>;
  mayCall: Map<string, string[] | undefined>;
  edges: Map<string, Set<string>>;
  /** Exceptions that allowed something (`oidc:<file>`, `storage:<file>`): the others are stale. */
  used: Set<string>;
  violations: Violation[];
}

/** The names each `export … from` of a wing index re-exports, as name -> src-relative target. */
function reExportsOf(srcDir: string, index: string): Map<string, string> {
  const path = join(srcDir, index);
  const map = new Map<string, string>();
  if (!existsSync(path)) return map;
  for (const imp of importsOf(index, readFileSync(path, 'utf8'))) {
    if (!imp.specifier.startsWith('.')) continue;
    for (const name of imp.names) map.set(name, resolveRelative(index, imp.specifier));
  }
  return map;
}

/** Step 1: each wing's index.ts has a May call line that names other wings of the service. */
function readHeaders(run: Run): void {
  for (const wing of run.wings) {
    const index = join(run.srcDir, wing, 'index.ts');
    const listed = existsSync(index) ? mayCallOf(readFileSync(index, 'utf8')) : undefined;
    run.mayCall.set(wing, listed);
    const at = { file: `${wing}/index.ts`, specifier: '-', rule: 'calls' as const };
    if (listed === undefined) {
      run.violations.push({
        ...at,
        message: existsSync(index)
          ? 'the header comment has no `May call: <wing>, …` (or `May call: nothing`) line'
          : 'the wing has no index.ts: its public module, with a header saying what it owns and `May call: …`',
      });
    }
    for (const other of (listed ?? []).filter((o) => !run.wings.has(o) || o === wing)) {
      run.violations.push({
        ...at,
        message: `lists '${other}' under May call, which is not another wing of this service`,
      });
    }
  }
}

/** Step 2: oidc-provider's internals are patched in their one module only (decision 0013). */
function checkProviderInternals(run: Run, file: string, text: string): void {
  if (file === PROVIDER_INTERNALS_MODULE) return;
  const code = ts
    .createPrinter({ removeComments: true })
    .printFile(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false));
  for (const pattern of PROVIDER_INTERNALS.filter((p) => p.test(code))) {
    run.violations.push({
      file,
      specifier: 'oidc-provider',
      rule: 'oidc-provider',
      message: `patches an oidc-provider internal (${pattern.source}): only ${PROVIDER_INTERNALS_MODULE} may (decision 0013)`,
    });
  }
}

/** Step 3: a package import: oidc-provider from its wing, storage clients where allowed. */
function checkPackageImport(run: Run, imp: ImportOf): void {
  const { file, specifier: pkg } = imp;
  const wing = wingOf(file);
  const at = { file: `${file}:${imp.line}`, specifier: pkg };
  const provider = pkg === 'oidc-provider' || pkg.startsWith('oidc-provider/');
  if (provider && wing !== PROVIDER_WING) {
    if (run.exceptions.oidcProviderImporters?.[file] !== undefined) run.used.add(`oidc:${file}`);
    else
      run.violations.push({
        ...at,
        rule: 'oidc-provider',
        message: `only the ${PROVIDER_WING}/ wing imports oidc-provider (decision 0013); use what ${PROVIDER_WING}/index.js exports`,
      });
  }
  if (!STORAGE_MODULES.includes(pkg)) return;
  const free = STORAGE_FREE_NAMES[pkg] ?? [];
  const storageFree = imp.names.length > 0 && imp.names.every((n) => free.includes(n));
  if (wing === undefined || wing === PLATFORM_WING || REPOSITORY.test(file) || storageFree) return;
  if (run.exceptions.storageImporters?.[file] !== undefined) run.used.add(`storage:${file}`);
  else
    run.violations.push({
      ...at,
      rule: 'storage',
      message: `a storage client outside a repository (*-repository.ts), ${PLATFORM_WING}/ or a composition root`,
    });
}

/** Step 4: an import of another wing goes through its index and is listed; returns the files it reaches. */
function checkWingImport(run: Run, imp: ImportOf, wing: string, target: string): string[] {
  const targetWing = wingOf(target);
  if (targetWing === undefined || targetWing === wing) return [target];
  const at = { file: `${imp.file}:${imp.line}`, specifier: imp.specifier };
  (run.edges.get(wing) ?? run.edges.set(wing, new Set()).get(wing)!).add(targetWing);
  const listed = run.mayCall.get(wing);
  if (listed !== undefined && !listed.includes(targetWing)) {
    run.violations.push({
      ...at,
      rule: 'calls',
      message: `wing '${wing}' imports wing '${targetWing}', which its index.ts does not list under May call`,
    });
  }
  if (target === `${targetWing}/index.ts`) {
    const reExports = reExportsOf(run.srcDir, target);
    return imp.names.map((n) => reExports.get(n) ?? target);
  }
  run.violations.push({
    ...at,
    rule: 'entry',
    message: `wing '${wing}' reaches inside wing '${targetWing}': import '../${targetWing}/index.js' instead`,
  });
  return [target];
}

/** Step 5: a repository reaches no route or page, directly or through an index. */
function checkLayers(run: Run, imp: ImportOf, reached: string[]): void {
  if (!REPOSITORY.test(imp.file)) return;
  for (const t of reached.filter((t) => ROUTE_OR_PAGE.test(t))) {
    run.violations.push({
      file: `${imp.file}:${imp.line}`,
      specifier: imp.specifier,
      rule: 'layers',
      message: `a repository imports a route or page (${t}); the route calls the repository, not the reverse`,
    });
  }
}

/** Checks the wings of `srcDir` (absolute) against the rules with `exceptions`. */
export function checkWings(srcDir: string, exceptions: WingExceptions = {}): Checked {
  const files = sourceFiles(srcDir);
  const run: Run = {
    srcDir,
    exceptions,
    wings: new Set(files.map(wingOf).filter((w): w is string => w !== undefined)),
    mayCall: new Map(),
    edges: new Map(),
    used: new Set(),
    violations: [],
  };
  readHeaders(run);
  for (const file of files) {
    const text = readFileSync(join(srcDir, file), 'utf8');
    checkProviderInternals(run, file, text);
    const wing = wingOf(file);
    for (const imp of importsOf(file, text)) {
      if (!imp.specifier.startsWith('.')) {
        checkPackageImport(run, imp);
        continue;
      }
      const target = resolveRelative(file, imp.specifier);
      checkLayers(
        run,
        imp,
        wing === undefined ? [target] : checkWingImport(run, imp, wing, target),
      );
    }
  }
  run.violations.push(...cycleViolations(run.edges, exceptions.cycleEdges ?? {}));
  run.violations.push(...staleExceptions(exceptions, run.used));
  return { violations: run.violations, edges: run.edges };
}

/** A cycle of the wing graph not broken by an allowed edge, one per cycle found; and allowed edges that no longer exist. */
function cycleViolations(
  edges: Map<string, Set<string>>,
  allowed: Record<string, string>,
): Violation[] {
  const violations: Violation[] = [];
  for (const edge of Object.keys(allowed)) {
    const [from, to] = edge.split(' -> ');
    if (!from || !to || !edges.get(from)?.has(to)) {
      violations.push({
        file: '-',
        specifier: edge,
        rule: 'exceptions',
        message: `the allowed cycle edge '${edge}' is no longer an import: remove it from the rules`,
      });
    }
  }
  const next = (w: string) => [...(edges.get(w) ?? [])].filter((t) => !(`${w} -> ${t}` in allowed));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (w: string): void => {
    state.set(w, 'open');
    path.push(w);
    for (const t of next(w).sort()) {
      if (state.get(t) === 'open') {
        const cycle = [...path.slice(path.indexOf(t)), t];
        violations.push({
          file: `${cycle[0]}/`,
          specifier: cycle.join(' -> '),
          rule: 'cycles',
          message: `the wings import each other in a cycle: ${cycle.join(' -> ')}; move the file that closes it, or allow the edge with its reason`,
        });
      } else if (!state.has(t)) visit(t);
    }
    path.pop();
    state.set(w, 'done');
  };
  for (const w of [...edges.keys()].sort()) if (!state.has(w)) visit(w);
  return violations;
}

/** Listed importers that no longer import what they are allowed: a stale exception hides nothing but misleads. */
function staleExceptions(exceptions: WingExceptions, used: Set<string>): Violation[] {
  const stale = (kind: string, list: Record<string, string> | undefined) =>
    Object.keys(list ?? {})
      .filter((file) => !used.has(`${kind}:${file}`))
      .map(
        (file): Violation => ({
          file,
          specifier: '-',
          rule: 'exceptions',
          message: `is listed as an allowed ${kind} importer but no longer needs it: remove it from the rules`,
        }),
      );
  return [
    ...stale('oidc', exceptions.oidcProviderImporters),
    ...stale('storage', exceptions.storageImporters),
  ];
}

/** The src/ directory of a service, absolute. */
export const serviceSrc = (service: string): string => join(repoRoot, 'services', service, 'src');

/** A path relative to the repository root, with forward slashes (for messages). */
export const repoRelative = (path: string): string => relative(repoRoot, path).split(sep).join('/');
