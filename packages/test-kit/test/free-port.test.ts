import { spawn } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { freePort } from '../src/index.js';

describe('freePort', () => {
  it('When asked many times before any port is bound, then it never hands out the same port twice', async () => {
    // A platform chooses all its ports before any service binds one: a repeat here is an EADDRINUSE there.
    const ports: number[] = [];
    for (let i = 0; i < 300; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('When two jest workers ask at the same moment, then they get ports from disjoint slices', async () => {
    // Another worker is another process with its own JEST_WORKER_ID; ask one for its ports as a worker would.
    const otherWorker = (id: string) =>
      new Promise<number[]>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', PORTS_OF_A_WORKER], {
          env: { ...process.env, JEST_WORKER_ID: id },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.on('error', reject);
        child.on('exit', (code) =>
          code === 0
            ? resolve(JSON.parse(out) as number[])
            : reject(new Error(`worker exited with ${code}`)),
        );
      });
    const [one, two] = await Promise.all([otherWorker('1'), otherWorker('2')]);
    const overlap = one.filter((port) => two.includes(port));
    expect(overlap).toEqual([]);
    expect(Math.max(...one)).toBeLessThan(Math.min(...two));
  });
});

/** The built test-kit's freePort, asked 200 times in one process: what one jest worker sees. */
const PORTS_OF_A_WORKER = `
import { freePort } from '${new URL('../dist/waiting.js', import.meta.url).href}';
const ports = [];
for (let i = 0; i < 200; i++) ports.push(await freePort());
process.stdout.write(JSON.stringify(ports));
`;
