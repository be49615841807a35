/**
 * No function of product code spans more than MAX_FUNCTION_LINES lines unless the line directly
 * above it (or the comment block it leads) says why: `// long: <reason>` — a route table of one
 * entry per route, a migration, a repository whose methods are one query each. A flow is a short
 * pipeline of named steps instead. LONG_FUNCTIONS_PENDING lists the functions not split yet; it
 * can only shrink (a stale entry fails too).
 */
import { describe, expect, test } from '@jest/globals';
import { LONG_FUNCTIONS_PENDING } from '../src/long-functions-pending.js';
import { repoRoot } from '../src/repo-paths.js';
import {
  longFunctions,
  longFunctionsIn,
  MAX_FUNCTION_LINES,
  productFiles,
} from './helpers/long-functions.js';

const entryOf = (fn: { file: string; name: string }) => `${fn.file}#${fn.name}`;

/** A function of `bodyLines` statements (its span: two more, for its first and last lines). */
const fn = (name: string, bodyLines: number) =>
  [
    `export function ${name}(): number {`,
    ...Array.from({ length: bodyLines }, (_, i) => `  const v${i} = ${i};`),
    '  return 0;',
    '}',
  ].join('\n');

describe('the length check itself', () => {
  test('finds a function one line over the bound, and none at the bound', () => {
    const over = longFunctionsIn('synthetic.ts', fn('over', MAX_FUNCTION_LINES - 2));
    expect(over).toEqual([
      expect.objectContaining({ name: 'over', line: 1, lines: MAX_FUNCTION_LINES + 1 }),
    ]);
    expect(over[0]!.reason).toBeUndefined();
    expect(longFunctionsIn('synthetic.ts', fn('at', MAX_FUNCTION_LINES - 3))).toEqual([]);
  });

  test('takes a reason from the line above or the comment block above, never an empty one', () => {
    const body = fn('long', MAX_FUNCTION_LINES);
    const reasonOf = (text: string) => longFunctionsIn('synthetic.ts', text)[0]?.reason;
    expect(reasonOf(`// long: a table, one entry per route\n${body}`)).toBe(
      'a table, one entry per route',
    );
    expect(reasonOf(`// long: a migration\n/**\n * Its doc.\n */\n${body}`)).toBe('a migration');
    expect(reasonOf(`// long:   \n${body}`)).toBeUndefined();
    expect(reasonOf(`// long: too far up\n\n${body}`)).toBeUndefined();
    expect(reasonOf(`/* long: not a line comment */\n${body}`)).toBeUndefined();
  });

  test('names arrow functions, methods and nested functions', () => {
    const block = Array.from({ length: MAX_FUNCTION_LINES }, () => '  void 0;').join('\n');
    const text = [
      `const arrow = () => {\n${block}\n};`,
      `const object = {\n  method() {\n${block}\n  },\n};`,
      `export function outer() {\n  return () => {\n${block}\n  };\n}`,
    ].join('\n');
    expect(longFunctionsIn('synthetic.ts', text).map((f) => f.name)).toEqual([
      'arrow',
      'method',
      'outer',
      '(anonymous)',
    ]);
  });
});

describe('product code', () => {
  const files = productFiles(repoRoot);
  const found = longFunctions(repoRoot);

  test('is what is read: every service, the shipped packages, no test code', () => {
    expect(files).toContain('services/token-service/src/token-service.ts');
    expect(files).toContain('services/plant-store/src/config.ts');
    expect(files).toContain('packages/shared/src/http/index.ts');
    expect(files).toContain('packages/resource-auth/src/index.ts');
    expect(files).toContain('packages/deploy-checks/src/repo-paths.ts');
    expect(files.filter((f) => /\/test\/|^packages\/(test-kit|e2e|topology)\//.test(f))).toEqual(
      [],
    );
  });

  test(`has no function over ${MAX_FUNCTION_LINES} lines without its reason`, () => {
    const pending = new Set(LONG_FUNCTIONS_PENDING);
    const unexplained = found
      .filter((f) => f.reason === undefined && !pending.has(entryOf(f)))
      .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    expect(unexplained).toEqual([]);
  });

  test('lists as pending only functions still long and without a reason', () => {
    const stillPending = found.filter((f) => f.reason === undefined).map(entryOf);
    const stale = [...LONG_FUNCTIONS_PENDING];
    for (const entry of stillPending) {
      const at = stale.indexOf(entry);
      if (at >= 0) stale.splice(at, 1);
    }
    expect(stale).toEqual([]);
  });
});
