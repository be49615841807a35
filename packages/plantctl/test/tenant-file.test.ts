/**
 * The tenant file: what the published JSON Schema refuses (with the path of the mistake), what
 * the parser adds (defaults, sorted grants, keys by thumbprint), and what it never takes (a
 * private key, a secret, a name twice).
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { stringify } from 'yaml';
import { EXIT } from '../src/exit-codes.js';
import { API_VERSION, parseTenantFile } from '../src/tenant-file/tenant-file.js';

const file = (accounts: unknown[], extra: Record<string, unknown> = {}) =>
  stringify({ apiVersion: API_VERSION, kind: 'Tenant', ...extra, service_accounts: accounts });

const refusal = (text: string) =>
  parseTenantFile(text, 'tenant.yaml').then(
    () => undefined,
    (error: Error & { exitCode?: number }) => ({
      message: error.message,
      exitCode: error.exitCode,
    }),
  );

describe('the tenant file', () => {
  test('When an account gives only its name, then the defaults are the ones the API creates with', async () => {
    await expect(parseTenantFile(file([{ name: 'ci' }]))).resolves.toEqual({
      accounts: [
        {
          name: 'ci',
          role: 'View',
          grants: [],
          dpop_bound_access_tokens: false,
          receive_signals: false,
          quota: null,
          disabled: false,
          keys: [],
          trusts: [],
        },
      ],
    });
  });

  test('When keys are given as a JWK and as a PEM, then each is known by its RFC 7638 thumbprint, and grants are sorted', async () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const jwk = publicKey.export({ format: 'jwk' }) as JWK;
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const parsed = await parseTenantFile(
      file([{ name: 'ci', grants: ['tulips', 'roses'], keys: [{ jwk }, { pem }] }], {
        tenant: 'acme',
      }),
    );
    const thumbprint = await calculateJwkThumbprint(jwk, 'sha256');
    expect(parsed.tenant).toBe('acme');
    expect(parsed.accounts[0]!.grants).toEqual(['roses', 'tulips']);
    expect(parsed.accounts[0]!.keys.map((k) => k.thumbprint)).toEqual([thumbprint, thumbprint]);
  });

  test('When the file holds a private key, then it is refused before anything is read from the tenant', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    const result = await refusal(file([{ name: 'ci', keys: [{ jwk }] }]));
    expect(result?.exitCode).toBe(EXIT.usage);
    expect(result?.message).toContain('/service_accounts/0/keys/0/jwk');
  });

  test('When the file has a secret, an unknown field, a wrong apiVersion or a bad role, then the schema refuses it with where', async () => {
    for (const [text, where] of [
      [file([{ name: 'ci', secret: 'pss_x' }]), '/service_accounts/0'],
      [file([{ name: 'ci', role: 'Account Admin' }]), '/service_accounts/0/role'],
      [
        file([{ name: 'ci', quota: { per_minute: 0, mode: 'enforce' } }]),
        '/service_accounts/0/quota',
      ],
      [
        file([{ name: 'ci', trusts: [{ issuer: 'http://x', subject: 's', audience: 'a' }] }]),
        '/service_accounts/0/trusts/0/issuer',
      ],
      [file([{ name: '' }]), '/service_accounts/0/name'],
      [stringify({ apiVersion: 'v0', kind: 'Tenant', service_accounts: [] }), '/apiVersion'],
    ] as const) {
      const result = await refusal(text);
      expect(result?.exitCode).toBe(EXIT.usage);
      expect(result?.message).toContain(where);
    }
  });

  test('When an account declares its delegations, then each scope is a sorted set; without them the account has no delegations key (left alone)', async () => {
    const parsed = await parseTenantFile(
      file([
        {
          name: 'ci',
          delegations: [
            { audience: 'https://api.example', scope: ['plants:write', 'plants:read'] },
            { audience: 'http://plant-store.test', scope: ['plants:read'] },
          ],
        },
        { name: 'none', delegations: [] },
        { name: 'other' },
      ]),
    );
    expect(parsed.accounts.map((a) => a.delegations)).toEqual([
      [
        { audience: 'https://api.example', scope: ['plants:read', 'plants:write'] },
        { audience: 'http://plant-store.test', scope: ['plants:read'] },
      ],
      [],
      undefined,
    ]);
    expect(parsed.accounts[2]).not.toHaveProperty('delegations');
  });

  test('When a delegation has a scope that cannot be delegated, no scope, no URL or an extra field, then the schema refuses it with where; an audience twice (also with a trailing slash) is refused', async () => {
    const one = (delegation: unknown) => file([{ name: 'ci', delegations: [delegation] }]);
    for (const [text, where] of [
      [one({ audience: 'https://api.example', scope: ['admin'] }), '/delegations/0/scope/0'],
      [one({ audience: 'https://api.example', scope: [] }), '/delegations/0/scope'],
      [one({ audience: 'api.example', scope: ['plants:read'] }), '/delegations/0/audience'],
      [one({ audience: 'https://api.example' }), '/service_accounts/0/delegations/0'],
      [
        one({ audience: 'https://api.example', scope: ['plants:read'], actor: 'x' }),
        '/service_accounts/0/delegations/0',
      ],
    ] as const) {
      const result = await refusal(text);
      expect(result?.exitCode).toBe(EXIT.usage);
      expect(result?.message).toContain(where);
    }
    const twice = await refusal(
      file([
        {
          name: 'ci',
          delegations: [
            { audience: 'https://api.example', scope: ['plants:read'] },
            { audience: 'https://api.example/', scope: ['plants:write'] },
          ],
        },
      ]),
    );
    expect(twice).toEqual({
      exitCode: EXIT.usage,
      message: expect.stringContaining('names the audience "https://api.example/" twice'),
    });
  });

  test('When a name appears twice, also in another letter case, or a key is repeated in YAML, then the file is refused', async () => {
    expect((await refusal(file([{ name: 'ci' }, { name: 'CI' }])))?.message).toContain(
      'appears twice',
    );
    const repeated = `apiVersion: ${API_VERSION}\nkind: Tenant\nkind: Tenant\nservice_accounts: []\n`;
    expect((await refusal(repeated))?.exitCode).toBe(EXIT.usage);
  });

  test('When YAML aliases are nested to blow up the document, then parsing stops with an error, not memory', async () => {
    const bomb = [
      `apiVersion: ${API_VERSION}`,
      'kind: Tenant',
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'service_accounts: []',
    ].join('\n');
    expect((await refusal(bomb))?.exitCode).toBe(EXIT.usage);
  });

  test('When the published schema is read, then it is a JSON Schema 2020-12 document with the apiVersion the parser takes', () => {
    const schema = JSON.parse(
      readFileSync(new URL('../schema/tenant.schema.json', import.meta.url), 'utf8'),
    );
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.properties.apiVersion.const).toBe(API_VERSION);
  });
});
