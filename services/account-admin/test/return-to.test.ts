import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { DEFAULT_LANDING, safeReturnTo } from '../src/sign-in/return-to.js';

describe('safeReturnTo', () => {
  test.each([
    ['/activity', '/activity'],
    ['/activity?cursor=YmVmb3JlOjEw', '/activity?cursor=YmVmb3JlOjEw'],
    ['/settings/service-accounts', '/settings/service-accounts'],
    ['/a/../activity', '/activity'],
  ])('When asked to return to %s, then it returns %s', (input, expected) => {
    expect(safeReturnTo(input)).toBe(expected);
  });

  test.each([
    'https://evil.example/',
    'http:evil.example',
    '//evil.example',
    '///evil.example',
    '/\\evil.example',
    '/.//evil.example',
    '/%2e//evil.example',
    '/%2E%2E//evil.example',
    '/a/..//evil.example',
    '/a/b/../..//evil.example',
    '/./\\evil.example',
    '\\\\evil.example',
    ' /activity',
    '/activity\n',
    '/\tevil',
    'javascript:alert(1)',
    'activity',
    '',
    '/login?tenant=x',
    '/auth/callback?code=x',
    '/logout',
    `/${'a'.repeat(600)}`,
    42,
    undefined,
    ['/activity'],
  ])('When asked to return to %p, then it lands on the default page', (input) => {
    expect(safeReturnTo(input)).toBe(DEFAULT_LANDING);
  });
});

describe('safeReturnTo over generated paths', () => {
  const ORIGIN = 'http://portal.invalid';
  /** Pieces a crafted link is made of: dot segments plain and encoded, slashes and backslashes plain and encoded, schemes, hosts, controls. */
  const piece = fc.oneof(
    fc.constantFrom(
      '.',
      '..',
      '%2e',
      '%2E',
      '%2e%2e',
      '.%2e',
      '%2E.',
      '%2e.',
      '',
      'a',
      'activity',
      'settings',
      'evil.example',
      'user@evil.example',
      '@evil.example',
      ':443',
    ),
    fc.constantFrom(
      '/',
      '//',
      '\\',
      '\\\\',
      '%2f',
      '%2F',
      '%5c',
      '%5C',
      '%252f',
      '/\\',
      '\\/',
      '\u2215',
      '\uff0f',
    ),
    fc.constantFrom(
      'http:',
      'https:',
      'javascript:',
      'data:',
      'HTTP://',
      '//evil.example',
      'http://evil.example',
      'https://evil.example/',
    ),
    fc.constantFrom(
      '?',
      '#',
      '?x=//evil.example',
      '#//evil.example',
      '%00',
      '\u0000',
      '\t',
      '\n',
      '\r',
      ' ',
      '%09',
      '%0a',
      '%20',
    ),
    fc.string({ maxLength: 6 }),
  );
  const path = fc
    .tuple(
      fc.constantFrom('', '/', '//', '\\', '/.', '/..', '/%2e'),
      fc.array(piece, { maxLength: 8 }),
    )
    .map(([start, pieces]) => start + pieces.join(''));

  test('When any path of dot segments, encoded dots, slashes, backslashes, schemes and hosts is asked for, then the result is a same-origin path (one leading slash, resolving to the portal on any base) or the default landing', () => {
    fc.assert(
      fc.property(path, (raw) => {
        const result = safeReturnTo(raw);
        if (result === DEFAULT_LANDING) return;
        expect({ raw, leadingSlashes: /^\/(?![/\\])/.test(result) }).toEqual({
          raw,
          leadingSlashes: true,
        });
        expect({ raw, origin: new URL(result, `${ORIGIN}/some/page`).origin }).toEqual({
          raw,
          origin: ORIGIN,
        });
        expect({ raw, origin: new URL(result, 'https://portal.example:8443/x/y/').origin }).toEqual(
          { raw, origin: 'https://portal.example:8443' },
        );
        // What a browser follows (the path normalised) is itself safe and kept as it is.
        expect({ raw, again: safeReturnTo(result) }).toEqual({ raw, again: result });
      }),
      { numRuns: 20_000 },
    );
  });
});
