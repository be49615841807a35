/**
 * The wings of each service keep their boundaries (src/wing-rules.ts says which): a wing is
 * entered by its index.js, imports only the wings its header lists, no cycle between wings,
 * repositories import no routes or pages, oidc-provider and the storage clients only where the
 * rules allow. A synthetic tree proves the checker finds each kind of break.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { importsOf } from '../src/import-reading.js';
import { checkWings, mayCallOf } from '../src/import-rules.js';
import {
  describeViolation,
  PROVIDER_INTERNALS,
  PROVIDER_INTERNALS_MODULE,
  SERVICE_WING_RULES,
  serviceSrc,
  type Violation,
} from '../src/wing-rules.js';

describe.each(Object.keys(SERVICE_WING_RULES))('the wings of %s', (service) => {
  const { violations, edges } = checkWings(serviceSrc(service), SERVICE_WING_RULES[service]);

  test('keep their boundaries', () => {
    expect(violations.map(describeViolation)).toEqual([]);
  });

  test('are really read: the wings import each other', () => {
    expect(edges.size).toBeGreaterThan(1);
  });
});

test('the patterns of the oidc-provider internals match their one module', () => {
  const text = readFileSync(join(serviceSrc('token-service'), PROVIDER_INTERNALS_MODULE), 'utf8');
  for (const pattern of PROVIDER_INTERNALS) expect(text).toMatch(pattern);
});

test('every kind of import is read, with its names', () => {
  const found = importsOf(
    'a/x.ts',
    [
      "import d, { a as b, type C } from './one.js';",
      "import type { T } from '../b/index.js';",
      "export { e } from './two.js';",
      "export * from './three.js';",
      "import * as ns from 'ioredis';",
      "const m = await import('./four.js');",
      "import './side.js';",
    ].join('\n'),
  );
  expect(found.map((i) => [i.specifier, i.names, i.typeOnly, i.line])).toEqual([
    ['./one.js', ['default', 'a', 'C'], false, 1],
    ['../b/index.js', ['T'], true, 2],
    ['./two.js', ['e'], false, 3],
    ['./three.js', ['*'], false, 4],
    ['ioredis', ['*'], false, 5],
    ['./four.js', ['*'], false, 6],
    ['./side.js', [], false, 7],
  ]);
});

test('the May call line is read from the header only', () => {
  expect(mayCallOf('/**\n * Owns x.\n *\n * May call: a, b\n */\nexport {};\n')).toEqual([
    'a',
    'b',
  ]);
  expect(mayCallOf('/**\n * Owns x.\n * May call: nothing\n */\n')).toEqual([]);
  expect(mayCallOf('/** Owns x. */\n// May call: a\n')).toBeUndefined();
});

describe('a synthetic service with a break of every rule', () => {
  const root = mkdtempSync(join(tmpdir(), 'wing-rules-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  const header = (owns: string, calls: string) =>
    `/**\n * ${owns}\n *\n * May call: ${calls}\n */\n`;
  write('main.ts', "import { thing } from './a/a-thing.js';\nimport { Redis } from 'ioredis';\n");
  write('a/index.ts', `${header('Owns a.', 'b')}export { aThing } from './a-thing.js';\n`);
  write(
    'a/a-thing.ts',
    "import { bThing } from '../b/b-thing.js';\nimport { cThing } from '../c/index.js';\nexport const aThing = 1;\n",
  );
  write(
    'a/a-repository.ts',
    "import { form } from './a-form.js';\nimport { page } from '../b/index.js';\n",
  );
  write('a/a-form.ts', 'export const form = 1;\n');
  write('b/index.ts', `${header('Owns b.', 'a, zed')}export { page } from './b-page.js';\n`);
  write('b/b-page.ts', "import { aThing } from '../a/index.js';\nexport const page = 1;\n");
  write('b/b-thing.ts', "import type { Redis } from 'ioredis';\nexport const bThing = 1;\n");
  write('c/index.ts', '// owns c\nexport const cThing = 1;\n');
  write(
    'c/c-repository.ts',
    "import type { Redis } from 'ioredis';\nimport { isDatabaseUnavailable } from '@plant/shared/db';\n",
  );
  write(
    'c/provider.ts',
    "import type Provider from 'oidc-provider';\nprovider.Client.prototype.x = 1;\n",
  );
  write('c/only-error.ts', "import { isDatabaseUnavailable } from '@plant/shared/db';\n");
  write('migrations/0001.ts', "import type { Knex } from '@plant/shared/db';\n");

  const found = checkWings(root, {
    cycleEdges: { 'c -> a': 'no longer an import' },
    storageImporters: { 'c/only-error.ts': 'stale' },
  }).violations;
  const has = (rule: Violation['rule'], file: string, text: string) =>
    expect(
      found.filter(
        (v) => v.rule === rule && v.file.startsWith(file) && describeViolation(v).includes(text),
      ),
    ).not.toEqual([]);

  test('names file, import and rule in one line', () => {
    expect(found.map(describeViolation)).toContain(
      "a/a-thing.ts:1 imports '../b/b-thing.js': wing 'a' reaches inside wing 'b': import '../b/index.js' instead [entry]",
    );
  });
  test('a wing entered elsewhere than its index', () =>
    has('entry', 'a/a-thing.ts', 'b/b-thing.js'));
  test('a wing imported but not listed', () =>
    has('calls', 'a/a-thing.ts', "imports wing 'c', which its index.ts does not list"));
  test('a listed wing that does not exist', () => has('calls', 'b/index.ts', "'zed'"));
  test('an index without May call', () => has('calls', 'c/index.ts', 'no `May call'));
  test('a cycle, named', () => has('cycles', 'a/', 'a -> b -> a'));
  test('a repository importing a form, directly or through an index', () => {
    has('layers', 'a/a-repository.ts', 'a/a-form.ts');
    has('layers', 'a/a-repository.ts', 'b/b-page.ts');
  });
  test('oidc-provider outside its wing, imported or patched', () => {
    has('oidc-provider', 'c/provider.ts:1', 'only the oidc/ wing');
    has('oidc-provider', 'c/provider.ts', 'patches an oidc-provider internal');
  });
  test('a storage client outside repositories', () => has('storage', 'b/b-thing.ts', 'ioredis'));
  test('stale exceptions', () => {
    has('exceptions', '-', "'c -> a'");
    has('exceptions', 'c/only-error.ts', 'no longer needs it');
  });
  test('and nothing where the rules allow', () => {
    const files = found.map((v) => v.file.split(':')[0]);
    expect(files).not.toContain('main.ts');
    expect(files).not.toContain('c/c-repository.ts');
    expect(files).not.toContain('migrations/0001.ts');
  });
});
