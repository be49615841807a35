import { describe, expect, test } from '@jest/globals';
import { constantTimeEquals } from '@plant/shared/security';
import type { Request, Response } from 'express';
import { authenticateInternalCaller, requireInternalScope } from '../src/platform/internal-auth.js';

const credentials = {
  resourceServerTokens: ['rs-one-0123456789abcdef', 'rs-two-0123456789abcdef'],
  accountAdminToken: 'admin-0123456789abcdef',
};

/** Runs the authenticator then a route's scope check on one Authorization header: what reached `next`. */
function authorize(
  authorization: string | undefined,
  scope: 'verify' | 'admin',
  equals = constantTimeEquals,
) {
  const req = { headers: authorization === undefined ? {} : { authorization } } as Request;
  const seen: unknown[] = [];
  authenticateInternalCaller(credentials, equals)(req, {} as Response, (err?: unknown) => {
    seen.push(err);
    if (err === undefined)
      requireInternalScope(scope)(req, {} as Response, (scopeErr?: unknown) => seen.push(scopeErr));
  });
  return seen.map((err) => (err === undefined ? 'next' : (err as { status: number }).status));
}

describe('authenticateInternalCaller', () => {
  test.each([
    ['the first resource server', 'rs-one-0123456789abcdef'],
    ['the second resource server', 'rs-two-0123456789abcdef'],
    ['account-admin (the last credential)', 'admin-0123456789abcdef'],
    ['no credential', 'nobody-0123456789abcdef'],
  ])(
    'When %s presents its token, then it is compared with every credential, none skipped after a match',
    (_who, token) => {
      const compared: string[] = [];
      const counting = (a: string, b: string) => {
        compared.push(b);
        return constantTimeEquals(a, b);
      };

      authorize(`Bearer ${token}`, 'verify', counting);

      expect(compared).toEqual([
        ...credentials.resourceServerTokens,
        credentials.accountAdminToken,
      ]);
    },
  );

  test.each([
    [
      'a resource server on a verify route',
      'Bearer rs-two-0123456789abcdef',
      'verify',
      ['next', 'next'],
    ],
    [
      'a resource server on an admin route',
      'Bearer rs-one-0123456789abcdef',
      'admin',
      ['next', 403],
    ],
    ['account-admin on an admin route', 'Bearer admin-0123456789abcdef', 'admin', ['next', 'next']],
    [
      'account-admin on a verify route',
      'bearer admin-0123456789abcdef',
      'verify',
      ['next', 'next'],
    ],
    ['a prefix of account-admin', 'Bearer admin-0123456789abcde', 'verify', [401]],
    ['two tokens', 'Bearer admin-0123456789abcdef rs-one-0123456789abcdef', 'verify', [401]],
    ['an empty bearer', 'Bearer ', 'verify', [401]],
    ['nothing', undefined, 'verify', [401]],
  ] as const)('When %s calls, then it gets %j', (_who, header, scope, outcome) => {
    expect(authorize(header, scope)).toEqual(outcome);
  });

  test('When a route is reached without the authenticator before it, then its scope check refuses (403)', () => {
    const seen: unknown[] = [];
    requireInternalScope('verify')({ headers: {} } as Request, {} as Response, (err?: unknown) =>
      seen.push(err),
    );

    expect(seen.map((err) => (err as { status: number }).status)).toEqual([403]);
  });
});
