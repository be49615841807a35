/**
 * The pure steps of token exchange's decision (src/token-exchange/exchange-policy.ts) where a
 * token we mint cannot reach them end to end: `may_act` (we never mint it, another issuer's
 * subject token could carry it), a subject token that has just expired, and the `act` nesting.
 */
import { describe, expect, test } from '@jest/globals';
import type { Principal } from '@plant/resource-auth';
import {
  actChain,
  assertMayAct,
  lifetimeOf,
  narrowedScope,
  readTarget,
  type ExchangeContext,
} from '../src/token-exchange/exchange-policy.js';

const actor = { sub: 'sa-actor', version: 4, delegations: [] };
const subject: Principal = {
  tenant: 't',
  sub: 'sa-subject',
  clientId: 'sa-subject',
  principalType: 'service_account',
  role: 'View',
  grants: [],
  scope: 'plants:read',
  ver: 1,
  exp: 1_000,
};
const at = (now: number): ExchangeContext => ({
  tenant: 't',
  audiences: ['http://plants.test'],
  portalAudience: 'http://portal.test',
  ttl: 300,
  inspect: () => Promise.reject(new Error('not used')),
  inspectWorkload: () => Promise.reject(new Error('not used')),
  nowSeconds: () => now,
});
const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    return (err as { error?: string }).error;
  }
  return undefined;
};

describe('Token exchange decision', () => {
  test('When the subject token names who may act for it (may_act), then only that actor may', () => {
    expect(
      codeOf(() => assertMayAct({ may_act: { sub: 'sa-actor' } }, subject, actor)),
    ).toBeUndefined();
    expect(codeOf(() => assertMayAct({ may_act: { sub: 'sa-other' } }, subject, actor))).toBe(
      'invalid_request',
    );
    expect(codeOf(() => assertMayAct({ may_act: 'sa-actor' }, subject, actor))).toBe(
      'invalid_request',
    );
  });

  test('When the subject token has less than a second left, then invalid_request; otherwise its remaining life, at most the TTL', () => {
    expect(codeOf(() => lifetimeOf(at(999.5), subject))).toBe('invalid_request');
    expect(codeOf(() => lifetimeOf(at(2_000), subject))).toBe('invalid_request');
    expect(lifetimeOf(at(900), subject)).toBe(100);
    expect(lifetimeOf(at(0), subject)).toBe(300);
    expect(lifetimeOf(at(900), subject, { ...subject, exp: 950 })).toBe(50);
  });

  test('When the subject token already names actors, then the new actor wraps them in order', () => {
    expect(actChain(actor)).toEqual({ sub: 'sa-actor', ver: 4 });
    expect(
      actChain(actor, [
        { sub: 'b', ver: 2 },
        { sub: 'c', ver: 3 },
      ]),
    ).toEqual({ sub: 'sa-actor', ver: 4, act: { sub: 'b', ver: 2, act: { sub: 'c', ver: 3 } } });
  });

  test('When actors authenticated with named credentials, then each act member keeps its own cred', () => {
    expect(
      actChain({ ...actor, cred: 'secret:s1' }, [
        { sub: 'b', ver: 2, cred: 'key:k2' },
        { sub: 'c', ver: 3 },
      ]),
    ).toEqual({
      sub: 'sa-actor',
      ver: 4,
      cred: 'secret:s1',
      act: { sub: 'b', ver: 2, cred: 'key:k2', act: { sub: 'c', ver: 3 } },
    });
  });

  test('When the scope or target is asked in other forms, then the rules hold', () => {
    const permitted = new Set(['plants:read', 'plants:write']);
    expect(
      narrowedScope({ ...subject, scope: 'plants:read plants:write' }, permitted, undefined),
    ).toBe('plants:read plants:write');
    expect(codeOf(() => narrowedScope(subject, permitted, ['plants:read']))).toBe(
      'invalid_request',
    );
    expect(readTarget({ resource: 'http://plants.test/' }, ['http://plants.test'])).toBe(
      'http://plants.test',
    );
    expect(codeOf(() => readTarget({}, ['http://plants.test']))).toBe('invalid_request');
  });
});
