/**
 * Exchanged tokens (RFC 8693 `act`): the actor chain is read and exposed, each principal in it
 * goes through the same revocation check as the subject, and a malformed or too deep chain is
 * refused rather than read as a token without actors.
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

function checker(revoked: Set<string>, unavailable = new Set<string>()) {
  const calls: Array<[string, number]> = [];
  const revocation: RevocationChecker = {
    check(_tenant, sub, ver): RevocationVerdict {
      calls.push([sub, ver]);
      if (unavailable.has(sub)) return 'unavailable';
      return revoked.has(sub) ? 'revoked' : 'valid';
    },
    isReady: () => true,
  };
  return { revocation, calls };
}

const chain = { sub: 'sa-middle', ver: 3, act: { sub: 'sa-first', ver: 7 } };

/** A checker that revokes credentials (`cred` values) only, as a removed secret or key does. */
function credentialChecker(revoked: Set<string>) {
  const calls: Array<[string, number, string | undefined]> = [];
  const revocation: RevocationChecker = {
    check(_tenant, sub, ver, cred): RevocationVerdict {
      calls.push([sub, ver, cred]);
      return cred !== undefined && revoked.has(cred) ? 'revoked' : 'valid';
    },
    isReady: () => true,
  };
  return { revocation, calls };
}

const credChain = {
  sub: 'sa-middle',
  ver: 3,
  cred: 'secret:middle-1',
  act: { sub: 'sa-first', ver: 7, cred: 'key:first-1' },
};

describe('Bearer verification: exchanged tokens', () => {
  test('When a token carries act, then the principal names the actors, current first, and each is checked with its ver', async () => {
    const { revocation, calls } = checker(new Set());
    const h = await resourceServer({ revocation });
    const token = issuer.mint({
      tenant: newRealm(),
      claims: { sub: 'sa-caller', ver: 2, act: chain },
    });
    const res = await whoami(h, token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sub: 'sa-caller',
      actors: [
        { sub: 'sa-middle', ver: 3 },
        { sub: 'sa-first', ver: 7 },
      ],
    });
    expect(calls).toEqual([
      ['sa-caller', 2],
      ['sa-middle', 3],
      ['sa-first', 7],
    ]);
  });

  test.each(['sa-caller', 'sa-middle', 'sa-first'])(
    'When %s is revoked, then the exchanged token is refused',
    async (whom) => {
      const { revocation } = checker(new Set([whom]));
      const h = await resourceServer({ revocation });
      const token = issuer.mint({ tenant: newRealm(), claims: { sub: 'sa-caller', act: chain } });
      expect(outcome(await whoami(h, token))).toEqual(invalidToken('Token has been revoked'));
    },
  );

  test('When an actor cannot be checked, then 503 (fail closed); a revoked one elsewhere in the chain still refuses', async () => {
    const unknown = await resourceServer({
      revocation: checker(new Set(), new Set(['sa-first'])).revocation,
    });
    const token = issuer.mint({ tenant: newRealm(), claims: { sub: 'sa-caller', act: chain } });
    expect((await whoami(unknown, token)).status).toBe(503);
    const both = await resourceServer({
      revocation: checker(new Set(['sa-caller']), new Set(['sa-first'])).revocation,
    });
    expect((await whoami(both, token)).status).toBe(401);
  });

  test('When the subject and the actors name their credentials, then each is checked with its own', async () => {
    const { revocation, calls } = credentialChecker(new Set());
    const h = await resourceServer({ revocation });
    const token = issuer.mint({
      tenant: newRealm(),
      claims: { sub: 'sa-caller', ver: 2, cred: 'trust:caller-1', act: credChain },
    });
    const res = await whoami(h, token);
    expect(res.status).toBe(200);
    expect(res.body.actors).toEqual([
      { sub: 'sa-middle', ver: 3, cred: 'secret:middle-1' },
      { sub: 'sa-first', ver: 7, cred: 'key:first-1' },
    ]);
    expect(calls).toEqual([
      ['sa-caller', 2, 'trust:caller-1'],
      ['sa-middle', 3, 'secret:middle-1'],
      ['sa-first', 7, 'key:first-1'],
    ]);
  });

  test.each(['trust:caller-1', 'secret:middle-1', 'key:first-1'])(
    'When the credential %s is revoked, then the exchanged token is refused',
    async (credential) => {
      const h = await resourceServer({
        revocation: credentialChecker(new Set([credential])).revocation,
      });
      const token = issuer.mint({
        tenant: newRealm(),
        claims: { sub: 'sa-caller', cred: 'trust:caller-1', act: credChain },
      });
      expect(outcome(await whoami(h, token))).toEqual(invalidToken('Token has been revoked'));
    },
  );

  test('When another credential of an actor is revoked, then the exchanged token is accepted', async () => {
    const h = await resourceServer({
      revocation: credentialChecker(new Set(['secret:middle-2'])).revocation,
    });
    const token = issuer.mint({ tenant: newRealm(), claims: { act: credChain } });
    expect((await whoami(h, token)).status).toBe(200);
  });

  test.each<[string, unknown]>([
    ['a string', 'sa-middle'],
    ['a numeric cred', { sub: 'sa-middle', ver: 1, cred: 7 }],
    ['an empty cred', { sub: 'sa-middle', ver: 1, cred: '' }],
    [
      'an inner actor with a list for cred',
      { sub: 'a', ver: 1, act: { sub: 'b', ver: 1, cred: ['x'] } },
    ],
    ['no ver', { sub: 'sa-middle' }],
    ['a zero ver', { sub: 'sa-middle', ver: 0 }],
    ['an empty sub', { sub: '', ver: 1 }],
    ['a malformed inner act', { sub: 'a', ver: 1, act: [] }],
    [
      'four actors',
      {
        sub: 'a',
        ver: 1,
        act: { sub: 'b', ver: 1, act: { sub: 'c', ver: 1, act: { sub: 'd', ver: 1 } } },
      },
    ],
  ])('When act is %s, then the token is refused', async (_case, act) => {
    const h = await resourceServer({ revocation: checker(new Set()).revocation });
    const token = issuer.mint({ tenant: newRealm(), claims: { act } });
    expect(outcome(await whoami(h, token))).toEqual(invalidToken('Token act claim is invalid'));
  });

  test('When a token has no act, then it has no actors and only its subject is checked', async () => {
    const { revocation, calls } = checker(new Set());
    const h = await resourceServer({ revocation });
    const res = await whoami(
      h,
      issuer.mint({ tenant: newRealm(), claims: { sub: 'sa-plain', ver: 1 } }),
    );
    expect(res.body.actors).toBeUndefined();
    expect(calls).toEqual([['sa-plain', 1]]);
  });
});
