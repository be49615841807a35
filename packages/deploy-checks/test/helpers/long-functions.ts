// The functions of product code longer than a bound, read with the TypeScript compiler API, and
// whether each carries its reason (`// long: <reason>`) above it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** The longest a function may be (its span in lines, braces included) without a reason. */
export const MAX_FUNCTION_LINES = 80;

/**
 * Product code: every service's src and the packages that ship in a service. Test code and the
 * test tooling packages (test-kit, e2e, topology) are not product code.
 */
export const PRODUCT_ROOTS = [
  'services/*/src',
  'packages/shared/src',
  'packages/resource-auth/src',
  'packages/deploy-checks/src',
];

export interface LongFunction {
  /** Repo-relative path, `/`-separated. */
  file: string;
  /** 1-based line of the function's first line. */
  line: number;
  /** The declared name, the variable or property it is assigned to, or `(anonymous)`. */
  name: string;
  lines: number;
  /** The text after `// long:` in the comment block directly above, when non-empty. */
  reason: string | undefined;
}

const LONG_REASON = /^\s*\/\/ long:(.*)$/;
const COMMENT_LINE = /^\s*(\/\/|\/\*|\*)/;

function nameOf(node: ts.SignatureDeclaration, sf: ts.SourceFile): string {
  if (node.name !== undefined) return node.name.getText(sf);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))
    return parent.name.getText(sf);
  return '(anonymous)';
}

/** The reason in the run of comment lines directly above `line` (0-based), if any. */
function reasonAbove(lines: readonly string[], line: number): string | undefined {
  for (let i = line - 1; i >= 0 && COMMENT_LINE.test(lines[i]!); i -= 1) {
    const reason = LONG_REASON.exec(lines[i]!)?.[1]?.trim();
    if (reason) return reason;
  }
  return undefined;
}

/** The functions of one source text spanning more than `max` lines, outermost first. */
export function longFunctionsIn(
  file: string,
  text: string,
  max = MAX_FUNCTION_LINES,
): LongFunction[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines = text.split('\n');
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.end).line;
      if (end - start + 1 > max)
        found.push({
          file,
          line: start + 1,
          name: nameOf(node, sf),
          lines: end - start + 1,
          reason: reasonAbove(lines, start),
        });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** The `.ts` files (not declarations) under the product roots, repo-relative. */
export function productFiles(repoRoot: string, roots = PRODUCT_ROOTS): string[] {
  const dirs = roots.flatMap((root) => {
    const [head, star, tail] = root.split('/');
    if (star !== '*') return [root];
    return readdirSync(join(repoRoot, head!), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${head}/${entry.name}/${tail}`);
  });
  return dirs
    .flatMap((dir) =>
      (readdirSync(join(repoRoot, dir), { recursive: true }) as string[]).map((file) =>
        relative(repoRoot, join(repoRoot, dir, file))
          .split('\\')
          .join('/'),
      ),
    )
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .sort();
}

/** Every long function of product code. */
export function longFunctions(repoRoot: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  return productFiles(repoRoot).flatMap((file) =>
    longFunctionsIn(file, readFileSync(join(repoRoot, file), 'utf8'), max),
  );
}
