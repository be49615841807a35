/**
 * The role and grant helpers every API calls (`hasRole`, `hasEditGrant`, `requireRole`): the
 * token's scope narrows what the role and grants allow and never widens it.
 */
import { describe, expect, test } from '@jest/globals';
import {
  editGrantRefusal,
  hasEditGrant,
  hasRole,
  hasScope,
  type Principal,
  type Role,
  roleRefusal,
} from '../src/index.js';

const principal = (role: Role, scope: string, grants: Principal['grants'] = []): Principal => ({
  tenant: 'acme',
  sub: 'sa-1',
  clientId: 'sa-1',
  principalType: 'service_account',
  role,
  grants,
  scope,
  ver: 1,
  exp: 0,
});

describe('hasRole with the token scope', () => {
  test.each([
    ['Edit', 'plants:read plants:write', 'Edit', true],
    ['Edit', 'plants:read', 'Edit', false],
    ['Edit', 'plants:read', 'View', true],
    ['Edit', 'plants:write', 'View', false],
    ['Edit', 'plants:write', 'Edit', true],
    ['Account Admin', 'plants:read plants:write', 'Account Admin', true],
    ['Account Admin', 'plants:read', 'Edit', false],
    ['View', 'plants:read plants:write', 'Edit', false],
    ['View', 'plants:read', 'View', true],
    ['Edit', '', 'View', false],
    ['Edit', 'openid email profile', 'View', false],
    ['Edit', 'plants:readplants:write', 'View', false],
    ['Edit', 'plants:read  plants:write', 'Edit', true],
  ] as const)(
    'When a %s principal with scope %j is checked for %s, then hasRole is %s',
    (role, scope, minimum, expected) => {
      expect(hasRole(principal(role, scope), minimum)).toBe(expected);
    },
  );

  test('When the role is too low, then the refusal names the role even if the scope is narrow too', () => {
    expect(roleRefusal(principal('View', 'plants:read'), 'Edit')).toBe('role');
    expect(roleRefusal(principal('Edit', 'plants:read'), 'Edit')).toBe('scope');
    expect(roleRefusal(principal('Edit', 'plants:read plants:write'), 'Edit')).toBeUndefined();
  });
});

describe('hasEditGrant with the token scope', () => {
  const grants = [{ tag: 'fern', permission: 'edit' as const }];

  test('When a View principal with a grant on fern has plants:write, then it may edit fern and nothing else', () => {
    const p = principal('View', 'plants:read plants:write', grants);
    expect([hasEditGrant(p, 'fern'), hasEditGrant(p, 'cactus')]).toEqual([true, false]);
  });

  test('When a View principal with a grant on fern has a plants:read token, then the grant does not let it edit', () => {
    const p = principal('View', 'plants:read', grants);
    expect({
      allowed: hasEditGrant(p, 'fern'),
      why: editGrantRefusal(p, 'fern'),
      other: editGrantRefusal(p, 'cactus'),
    }).toEqual({ allowed: false, why: 'scope', other: 'grant' });
  });

  test('When hasScope reads a scope, then it matches whole values only', () => {
    const p = principal('Edit', 'plants:read plants:write');
    expect([
      hasScope(p, 'plants:read'),
      hasScope(p, 'plants'),
      hasScope(p, ''),
      hasScope(p, 'plants:read plants:write'),
    ]).toEqual([true, false, false, false]);
  });
});
