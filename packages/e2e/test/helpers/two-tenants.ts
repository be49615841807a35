/**
 * The platform of the hostile-auth tests: all three services as processes, tenants A and B with
 * an Edit service account and a token each, a plant of B's, and A's REAL realm signing key with
 * the header and claims of A's token, so a forgery can differ from a real token by one flaw.
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import type { KeyObject } from 'node:crypto';
import {
  decodeJwt,
  errorShapeProblem,
  realmSigningKey,
  startPlatform,
  TEST_SECRETS,
  type Answer,
  type Platform,
  type ServiceAccount,
} from '../../src/index.js';

export interface TwoTenants {
  p: Platform;
  tenantA: string;
  tenantB: string;
  accountA: ServiceAccount;
  accountB: ServiceAccount;
  tokenA: string;
  tokenB: string;
  keyA: { kid: string; privateKey: KeyObject; publicPem: string };
  claimsA: Record<string, unknown>;
  headerA: Record<string, unknown>;
}

/** Starts the platform and both tenants before the calling file's tests; closes it after. Fields are set once beforeAll has run. */
export function useTwoTenants(): TwoTenants {
  const t = {} as TwoTenants;
  beforeAll(async () => {
    const p = await startPlatform({ plantStores: 1, accountAdmin: true });
    t.p = p;
    [t.tenantA, t.tenantB] = [await p.createTenant('aa'), await p.createTenant('ab')];
    [t.accountA, t.accountB] = [
      await p.createServiceAccount(t.tenantA, { role: 'Edit' }),
      await p.createServiceAccount(t.tenantB, { role: 'Edit' }),
    ];
    [t.tokenA, t.tokenB] = [
      await p.grantToken(t.tenantA, t.accountA),
      await p.grantToken(t.tenantB, t.accountB),
    ];
    expect((await p.createPlant(t.tokenB, { id: 1, name: 'b-plant' })).status).toBe(200);
    t.keyA = await realmSigningKey(p.databaseUrl, t.tenantA, TEST_SECRETS.KEY_ENCRYPTION_KEY);
    ({ header: t.headerA, payload: t.claimsA } = decodeJwt(t.tokenA));
  }, 90_000);
  afterAll(() => t.p?.close());
  return t;
}

/** Now in JWT seconds. */
export const now = () => Math.floor(Date.now() / 1000);

/** A 401 in the Error shape with an invalid_token challenge of `realm`. */
export function expectInvalidToken(answer: Answer, realm: string): void {
  expect({
    status: answer.status,
    shape: errorShapeProblem(answer) ?? 'ok',
    challenge: answer.headers['www-authenticate'],
  }).toEqual({
    status: 401,
    shape: 'ok',
    challenge: expect.stringMatching(new RegExp(`^Bearer realm="${realm}", error="invalid_token"`)),
  });
}
