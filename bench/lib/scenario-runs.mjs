// The bench's two runs around its scenarios: a check that each scenario's requests work before
// loading them, and the revocation bench as a process of its own.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { grantBody, ROOT, tokenPath } from './platform.mjs';

/**
 * The revocation scenario belongs to the revocation engineer's `pnpm bench:revocation`
 * (bench/revocation/run.mjs, a CLI with its own token service, two Plant Stores and
 * redis-server). It runs after ours, as its own process, and its summary joins this table.
 * @param {{ iterations: number, logDir: string }} options  a third of the iterations are deletes
 * @returns {Promise<any>}
 */
export async function runRevocation({ iterations, logDir }) {
  const script = join(ROOT, 'bench/revocation/run.mjs');
  if (!existsSync(script)) return { skipped: 'bench/revocation/run.mjs not present' };
  const out = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, `--iterations=${iterations}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.stderr.on('data', (c) => (text += c));
    child.once('exit', (code) =>
      code === 0
        ? resolve(text)
        : reject(new Error(`bench:revocation exited ${code}:\n${text.slice(-2000)}`)),
    );
  });
  mkdirSync(logDir, { recursive: true });
  writeFileSync(join(logDir, 'bench-revocation.txt'), /** @type {string} */ (out));
  const written = /written (\S+\.json)/.exec(/** @type {string} */ (out));
  if (!written) throw new Error('bench:revocation printed no result file');
  const file = join(ROOT, /** @type {string} */ (written[1]));
  const result = JSON.parse(readFileSync(file, 'utf8'));
  // Its figures are embedded here; the per-change samples stay out of our file.
  unlinkSync(file);
  const { samples: _samples, ...summary } = result;
  return summary;
}

/**
 * One request of each kind before loading, so a broken setup fails loudly instead of
 * benchmarking error responses.
 * @param {string} name
 * @param {any} ctx
 */
export async function assertScenarioWorks(
  name,
  { platform, tenant, tokens, baselines, oidcClient, accounts },
) {
  /** @type {[string, RequestInit][]} */
  const checks = [];
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  if (name === 'token' || name === 'keys' || name === 'signin' || name === 'flood') {
    checks.push([
      `${platform.tokenService.url}${tokenPath(tenant)}`,
      {
        method: 'POST',
        headers: form,
        body: grantBody(accounts.writer.client_id, accounts.writer.secret),
      },
    ]);
  }
  if (name === 'token') {
    checks.push([
      `${baselines.oidc.url}/protocol/openid-connect/token`,
      { method: 'POST', headers: form, body: grantBody(oidcClient.id, oidcClient.secret) },
    ]);
  }
  if (name === 'list') {
    for (const url of [platform.plantStores[0].url, baselines.naive.url]) {
      checks.push([
        `${url}/plants?limit=20`,
        { headers: { authorization: `Bearer ${tokens.reader}` } },
      ]);
    }
  }
  if (name === 'create') {
    for (const url of [platform.plantStores[0].url, baselines.naive.url]) {
      checks.push([
        `${url}/plants`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens.writer}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id: 999_999, name: 'check', tag: 'bench' }),
        },
      ]);
    }
  }
  for (const [url, init] of checks) {
    const res = await fetch(url, init);
    const body = await res.text();
    if (res.status !== 200)
      throw new Error(
        `${name}: ${init.method ?? 'GET'} ${url} answered ${res.status} ${body.slice(0, 200)}`,
      );
  }
}

/**
 * One request of each side of a scenario's pair (requests without a per-request body), each
 * answering 200, before loading them.
 * @param {string} name
 * @param {{ours: import('./load.mjs').Target, baseline: import('./load.mjs').Target}} pair
 */
export async function assertTargetsAnswer(name, pair) {
  for (const { spec } of [pair.ours, pair.baseline]) {
    const { url, method, path, headers, body } =
      /** @type {{url: string, method: string, path: string, headers: Record<string, string>, body?: string}} */ (
        spec
      );
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    if (res.status !== 200)
      throw new Error(
        `${name}: ${method} ${url}${path} answered ${res.status} ${text.slice(0, 200)}`,
      );
  }
}
