/**
 * The CLI reference is the CLI's own help: docs/cli-reference.md is what `renderCliReference`
 * makes from `--help` now, and the help a person sees names every command and the exit codes.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { renderCliReference } from '../src/cli-reference.js';
import { run } from '../src/program.js';

describe('the CLI reference', () => {
  test('When docs/cli-reference.md is compared with the help of every command, then it is current (`pnpm --filter @plant/plantctl docs:cli` rewrites it)', () => {
    const doc = readFileSync(new URL('../docs/cli-reference.md', import.meta.url), 'utf8');
    expect(doc).toBe(renderCliReference());
  });

  test('When plantctl --help runs, then it exits 0 with the exit codes; an unknown command exits 64', async () => {
    const out: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => out.push(t) };
    const env = { PLANTCTL_CONFIG_DIR: '/nonexistent' };
    await expect(run(['node', 'plantctl', '--help'], io, env)).resolves.toBe(0);
    expect(out.join('')).toContain('5   conflict');
    await expect(run(['node', 'plantctl', 'no-such-command'], io, env)).resolves.toBe(64);
  });

  test('When a command needs a sign-in and there is none, then it exits 3 with one line saying to log in', async () => {
    const err: string[] = [];
    const io = { out: () => {}, err: (t: string) => err.push(t) };
    const code = await run(['node', 'plantctl', 'service-accounts', 'list'], io, {
      PLANTCTL_CONFIG_DIR: '/nonexistent/plantctl',
    });
    expect(code).toBe(3);
    expect(err).toEqual([
      'plantctl: Not signed in: run plantctl login --tenant <tenant> --portal <url>\n',
    ]);
  });
});
