/**
 * @plant/shared is imported by concern (packages/shared/README.md): the package has no root, each
 * subpath is a folder's index that says what it is for, a name has one home, and no file of the
 * repository goes back to importing everything from the root.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const PACKAGE_DIR = join(import.meta.dirname, '..');
const REPO_ROOT = join(PACKAGE_DIR, '../..');
const SKIP_DIRS = new Set(['node_modules', 'dist', 'results', 'coverage']);

interface ExportTarget {
  types: string;
  default: string;
}

const exportsField = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'))
  .exports as Record<string, ExportTarget>;
const subpaths = Object.keys(exportsField)
  .filter((key) => key.startsWith('./'))
  .map((key) => key.slice(2));

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.'))
        yield* sourceFiles(join(dir, entry.name));
    } else if (/\.(ts|mts|js|mjs|cjs)$/.test(entry.name)) {
      yield join(dir, entry.name);
    }
  }
}

describe('@plant/shared subpaths', () => {
  it('When a package resolves @plant/shared, then there is no root export to import everything from', () => {
    expect(Object.keys(exportsField)).not.toContain('.');
    expect(subpaths.length).toBeGreaterThan(1);
  });

  it.each(subpaths)(
    'When %s is exported, then it is the built form of src/<subpath>/index.ts, which says what it is for',
    (sub) => {
      expect(exportsField[`./${sub}`]).toEqual({
        types: `./dist/${sub}/index.d.ts`,
        default: `./dist/${sub}/index.js`,
      });
      const firstLine = readFileSync(join(PACKAGE_DIR, 'src', sub, 'index.ts'), 'utf8').split(
        '\n',
      )[0];
      expect(firstLine).toMatch(/^\/\*\* \S.* \*\/$/);
    },
  );

  it('When every subpath is loaded, then no value is exported by two of them', async () => {
    const homes = new Map<string, string[]>();
    for (const sub of subpaths) {
      const module: Record<string, unknown> = await import(`@plant/shared/${sub}`);
      for (const name of Object.keys(module)) homes.set(name, [...(homes.get(name) ?? []), sub]);
    }
    const twice = [...homes].filter(([, subs]) => subs.length > 1);
    expect(twice).toEqual([]);
  });

  it('When a file of the repository imports @plant/shared, then it names a subpath, never the root', () => {
    const rootImport = /(?:from\s*|import\s*\(\s*|import\s+)['"]@plant\/shared['"]/;
    const offenders = [...sourceFiles(REPO_ROOT)]
      .filter((file) => rootImport.test(readFileSync(file, 'utf8')))
      .map((file) => relative(REPO_ROOT, file));
    expect(offenders).toEqual([]);
  });
});
