/**
 * Bearer verification asks the revocation checker on every request, cached token or not, and
 * fails closed when the checker cannot answer.
 */
import { describe, expect, test } from '@jest/globals';
import type { RevocationChecker, RevocationVerdict } from '../src/index.js';
import {
  invalidToken,
  issuer,
  newRealm,
  outcome,
  resourceServer,
  useTestIssuer,
  whoami,
} from './bearer-support.js';

useTestIssuer();

describe('Bearer verification: revocation', () => {
  function checker(answer: () => RevocationVerdict | Promise<RevocationVerdict>) {
    const calls: Array<[string, string, number]> = [];
    const revocation: RevocationChecker = {
      check(tenant, sub, ver) {
        calls.push([tenant, sub, ver]);
        return answer();
      },
      isReady: () => true,
    };
    return { revocation, calls };
  }

  test('When the same token is used repeatedly, then revocation is checked on every request with its tenant, sub and ver', async () => {
    let verdict: RevocationVerdict = 'valid';
    const { revocation, calls } = checker(() => verdict);
    const h = await resourceServer({ revocation });
    const tenant = newRealm();
    const token = issuer.mint({ tenant, claims: { sub: 'sa-rev', ver: 4 } });
    for (let i = 0; i < 3; i += 1) expect((await whoami(h, token)).status).toBe(200);
    expect(calls).toEqual([
      [tenant, 'sa-rev', 4],
      [tenant, 'sa-rev', 4],
      [tenant, 'sa-rev', 4],
    ]);
    verdict = 'revoked';
    expect(outcome(await whoami(h, token))).toEqual(invalidToken('Token has been revoked'));
  });

  test('When the checker answers asynchronously, then its verdict applies', async () => {
    let verdict: RevocationVerdict = 'valid';
    const { revocation } = checker(async () => verdict);
    const h = await resourceServer({ revocation });
    const tenant = newRealm();
    const token = issuer.mint({ tenant });
    expect((await whoami(h, token)).status).toBe(200);
    verdict = 'revoked';
    expect(outcome(await whoami(h, token))).toEqual(invalidToken('Token has been revoked'));
  });

  test.each<[string, () => RevocationVerdict | Promise<RevocationVerdict>]>([
    ['unavailable', () => 'unavailable'],
    [
      'throws',
      () => {
        throw new Error('map broken');
      },
    ],
    ['rejects', () => Promise.reject(new Error('map broken'))],
  ])('When the checker %s, then 503 (fail closed)', async (_case, answer) => {
    const { revocation } = checker(answer);
    const h = await resourceServer({ revocation });
    const res = await whoami(h, issuer.mint({ tenant: newRealm() }));
    expect({ status: res.status, body: res.body }).toEqual({
      status: 503,
      body: { error: 503, message: 'Token verification is temporarily unavailable' },
    });
  });
});
