/**
 * Where a new secret goes: a file only its owner can read and that plantctl never overwrites,
 * or a Kubernetes Secret manifest; never anywhere else.
 */
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import type { ServiceAccountWithSecret } from '../src/api/resources.js';
import { kubernetesName, SecretSink } from '../src/output/secret-sink.js';

const account = (name: string): ServiceAccountWithSecret =>
  ({ name, client_id: `pc-${name}`, secret: `pss_secret_of_${name}` }) as ServiceAccountWithSecret;

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

const tokenUrl = 'https://auth.example/realms/acme/protocol/openid-connect/token';

describe('secret sinks', () => {
  test('When secrets go to --secret-file, then the file is 0600, holds every new secret, and stdout and stderr hold none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plantctl-sink-'));
    const path = join(dir, 'secrets.json');
    const { io, out, err } = capture();
    const sink = new SecretSink(io, { secretFile: path, secretFormat: 'json', tokenUrl });
    await sink.assertWritable();
    await sink.put(account('a'));
    await sink.put(account('b'));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const lines = (await readFile(path, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.client_secret)).toEqual(['pss_secret_of_a', 'pss_secret_of_b']);
    expect([...out, ...err].join('')).not.toContain('pss_secret');
  });

  test('When the secret file exists already, then nothing is written over it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plantctl-sink-'));
    const path = join(dir, 'secret.txt');
    await writeFile(path, 'keep me');
    const sink = new SecretSink(capture().io, { secretFile: path, secretFormat: 'text', tokenUrl });
    await expect(sink.assertWritable()).rejects.toThrow('never overwrites');
    await expect(readFile(path, 'utf8')).resolves.toBe('keep me');
  });

  test('When the format is k8s, then stdout is a stream of Secret manifests a kubectl apply takes, one per account', async () => {
    const { io, out } = capture();
    const sink = new SecretSink(io, { secretFormat: 'k8s', tokenUrl });
    expect(sink.usesStdout).toBe(true);
    await sink.put(account('CI Deployer'));
    await sink.put(account('b'));
    const docs = parseAllDocuments(out.join('')).map((d) => d.toJS());
    expect(docs).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'plantctl-ci-deployer',
          labels: { 'app.kubernetes.io/managed-by': 'plantctl' },
          annotations: { 'plantstore.dev/service-account': 'CI Deployer' },
        },
        type: 'Opaque',
        stringData: {
          client_id: 'pc-CI Deployer',
          client_secret: 'pss_secret_of_CI Deployer',
          token_url: tokenUrl,
        },
      },
      expect.objectContaining({ metadata: expect.objectContaining({ name: 'plantctl-b' }) }),
    ]);
  });

  test('When a name has no DNS-1123 characters or is long, then the Secret name is still a valid one', () => {
    for (const name of ['Ünïcødé ✓', '---', 'x'.repeat(64), 'A_B.C'])
      expect(kubernetesName(name)).toMatch(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
  });
});
