import { describe, expect, test } from '@jest/globals';
import { DEFAULT_LANDING, safeReturnTo } from '../src/entry-points/web/return-to.js';

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
