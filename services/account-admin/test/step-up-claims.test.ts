/** What the portal makes of an ID token's factor claims and of a user view's factor counts (pure rules). */
import { describe, expect, test } from '@jest/globals';
import { factorStateOf, userAgentOf } from '../src/sessions/portal-sessions.js';
import { hasSecondFactor } from '../src/platform/step-up.js';

describe('factor claims', () => {
  test('When the ID token says acr factor with an auth_time, then the factor time is auth_time in ms', () => {
    expect(
      factorStateOf({
        acr: 'urn:plantstore:acr:factor',
        auth_time: 1_800_000_000,
        factors_enrolled: true,
      }),
    ).toEqual({ stepUpRequired: true, factorAt: 1_800_000_000_000 });
  });

  test('When the acr is the password one, absent, or auth_time is not a number, then no factor time is set', () => {
    for (const claims of [
      { acr: 'urn:plantstore:acr:password', auth_time: 1_800_000_000 },
      { auth_time: 1_800_000_000 },
      { acr: 'urn:plantstore:acr:factor', auth_time: '1800000000' },
      { acr: 'urn:plantstore:acr:factor', auth_time: Number.NaN },
    ])
      expect(factorStateOf(claims)).toEqual({ stepUpRequired: false });
  });

  test('When factors_enrolled is anything but true, then step-up is not required by the claim', () => {
    for (const value of ['true', 1, null, undefined, false])
      expect(factorStateOf({ factors_enrolled: value }).stepUpRequired).toBe(false);
  });

  test('When the user view counts a passkey or an authenticator app, then the person has a factor; recovery codes alone or no counts do not', () => {
    expect(hasSecondFactor({ factors: { passkeys: 1, totp: false, recovery_codes_left: 0 } })).toBe(
      true,
    );
    expect(hasSecondFactor({ factors: { passkeys: 0, totp: true, recovery_codes_left: 10 } })).toBe(
      true,
    );
    expect(
      hasSecondFactor({ factors: { passkeys: 0, totp: false, recovery_codes_left: 10 } }),
    ).toBe(false);
    expect(hasSecondFactor({ id: 'x' })).toBe(false);
    expect(hasSecondFactor({ factors: { passkeys: '2', totp: 'yes' } })).toBe(false);
  });

  test('When a User-Agent has control characters or is very long, then the session keeps it clean and cut to 256', () => {
    expect(userAgentOf('Agent\u0000\r\nX-Injected: 1')).toBe('AgentX-Injected: 1');
    expect(userAgentOf('a'.repeat(5000))).toHaveLength(256);
    expect(userAgentOf('   ')).toBeNull();
    expect(userAgentOf(undefined)).toBeNull();
  });
});
