/**
 * Checks a service's wings against the wing rules (wing-rules.ts says what they are and which
 * exceptions each service is allowed), from the imports import-reading.ts reads. A check is a run
 * of numbered steps over every file; the cycles rule is wing-cycles.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';
import { type ImportOf, importsOf, sourceFiles } from './import-reading.js';
import { repoRoot } from './repo-paths.js';
import { cycleViolations } from './wing-cycles.js';
import {
  NOT_WINGS,
  PLATFORM_WING,
  PROVIDER_INTERNALS,
  PROVIDER_INTERNALS_MODULE,
  PROVIDER_WING,
  REPOSITORY,
  ROUTE_OR_PAGE,
  STORAGE_FREE_NAMES,
  STORAGE_MODULES,
  type Violation,
  type WingExceptions,
} from './wing-rules.js';

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

/** A path relative to the repository root, with forward slashes (for messages). */
export const repoRelative = (path: string): string => relative(repoRoot, path).split(sep).join('/');
