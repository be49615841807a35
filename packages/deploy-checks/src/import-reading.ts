/**
 * A service's TypeScript files and their imports, read with the TypeScript parser: every static
 * import, export-from, dynamic import and import-equals, with the names each takes (what the
 * wing rules, wing-rules.ts, are checked against by import-rules.ts).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

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
