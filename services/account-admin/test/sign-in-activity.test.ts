/**
 * How Activity words a realm's sign-in (`user.sign_in`): the factor from the methods the realm
 * recorded (RFC 8176 `amr`), the client, a step-up. Pure wording; the entries themselves are
 * tested through the token service (sign-in-events.test.ts) and the portal (people.browser).
 */
import { describe, expect, test } from '@jest/globals';
import { describeSignIn } from '../src/audit/people-activity.js';

describe("Activity's words for a sign-in", () => {
  test.each([
    [{ client_id: 'portal', amr: ['pwd'], step_up: false }, 'with password, to the portal'],
    [
      { client_id: 'portal', amr: ['pwd', 'otp', 'mfa'], step_up: false },
      'with password and one-time code, to the portal',
    ],
    [
      { client_id: 'portal', amr: ['hwk', 'user', 'mfa'], step_up: true },
      'confirmed with passkey, to the portal',
    ],
    [{ client_id: 'plantctl', amr: ['pwd'], step_up: false }, 'with password, with plantctl'],
    [{}, 'with unknown method'],
    [{ client_id: 'portal', amr: 'pwd', step_up: 'yes' }, 'with unknown method, to the portal'],
  ])('When the details are %j, then it reads "%s"', (details, text) => {
    expect(describeSignIn(details)).toBe(text);
  });
});
