import { beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  collectInventory,
  type InventoryEntry,
  licenseAllowed,
  licenseProblems,
  renderInventory,
} from '../src/license-inventory.js';
import { repoRoot } from '../src/repo-paths.js';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

describe('the license policy', () => {
  test('When a package is copyleft, unlicensed or of an unknown license, then the check refuses it by name', () => {
    const entry = (name: string, license: string) => ({
      name,
      version: '1.0.0',
      license,
      services: ['plant-store' as const],
    });
    const refused = [
      'GPL-3.0-only',
      'GPL-2.0-or-later',
      'AGPL-3.0-only',
      'LGPL-2.1-only',
      'SSPL-1.0',
      'MPL-2.0',
      'EUPL-1.2',
      'UNLICENSED',
      'Unknown',
      'MIT AND GPL-3.0-only',
      'Apache-2.0 WITH LLVM-exception',
      'MIT OR (GPL-3.0-only AND ISC)',
    ];
    expect(licenseProblems(refused.map((l, i) => entry(`p${i}`, l)))).toEqual(
      refused.map((l, i) => `p${i}@1.0.0: ${l}`),
    );
    for (const allowed of [
      'MIT',
      'Apache-2.0',
      'BSD-3-Clause',
      '(MIT OR GPL-3.0-only)',
      'MIT AND ISC',
      '0BSD',
    ]) {
      expect(licenseAllowed(allowed)).toBe(true);
    }
  });

  let inventory: InventoryEntry[];
  // One pnpm run per service over the installed tree: a few seconds each.
  beforeAll(() => {
    inventory = collectInventory(repoRoot);
  }, 120_000);

  test('When the images’ production dependencies are read, then every license is on the allow-list', () => {
    expect(inventory.length).toBeGreaterThan(100);
    expect(licenseProblems(inventory)).toEqual([]);
  });

  test('When THIRD_PARTY_LICENSES.md is compared with a fresh inventory, then it is up to date (`pnpm licenses:inventory` writes it)', () => {
    expect(read('THIRD_PARTY_LICENSES.md')).toBe(renderInventory(inventory));
  });

  test('When the inventory names the OpenTelemetry SDK and exporter and the token service’s own dependencies, then it followed the workspace packages into their dependencies', () => {
    const names = new Map(inventory.map((e) => [e.name, e.services]));
    for (const sdkPart of ['@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http'])
      expect(names.get(sdkPart)).toEqual(['plant-store', 'token-service', 'account-admin']);
    // Only OTLP/HTTP ships: the SDK's gRPC and protobuf exporters are not in the images.
    expect([...names.keys()].filter((n) => n.startsWith('@grpc/') || n === 'protobufjs')).toEqual(
      [],
    );
    expect(names.get('oidc-provider')).toEqual(['token-service']);
    expect([...names.keys()].filter((n) => n.startsWith('@plant/'))).toEqual([]);
  });
});

describe('our own license', () => {
  test('When LICENSE is read, then it is the Apache License 2.0 verbatim', () => {
    // sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt
    expect(createHash('sha256').update(read('LICENSE')).digest('hex')).toBe(
      'cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30',
    );
    expect(read('NOTICE')).toContain('Apache License, Version 2.0');
  });

  test('When every package.json of the repository is read, then each says Apache-2.0', () => {
    const files = execFileSync('git', ['ls-files', '*package.json'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
    expect(files.length).toBeGreaterThanOrEqual(11);
    for (const file of files) {
      expect([file, (JSON.parse(read(file)) as { license?: string }).license]).toEqual([
        file,
        'Apache-2.0',
      ]);
    }
  });
});
