import { PLANTCTL_CLIENT_ID, PORTAL_CLIENT_ID } from '@plant/shared/api';

/** How the Activity page words the People actions. */
export const PEOPLE_ACTION_TEXT: Record<string, string> = {
  'user.invite': 'Invited',
  'user.role_change': 'Changed the role of',
  'user.disable': 'Disabled',
  'user.enable': 'Enabled',
  'user.remove': 'Removed',
  'invitation.revoke': 'Revoked the invitation of',
  'invitation.accept': 'Accepted the invitation:',
  'user.sign_in': 'Signed in',
};

/** The realm's successful sign-in: the person is both actor and target. */
export const SIGN_IN_ACTION = 'user.sign_in';

/**
 * Which factor a sign-in used, from its RFC 8176 `amr` (the token service records the methods,
 * never a code or a credential id): a passkey, a password with a one-time code (an authenticator
 * app or a recovery code, which the realm does not tell apart in `amr`), or the password alone.
 */
function factorOf(amr: readonly unknown[]): string {
  if (amr.includes('hwk')) return 'passkey';
  if (amr.includes('otp')) return 'password and one-time code';
  if (amr.includes('pwd')) return 'password';
  return 'unknown method';
}

/** "with password, to the portal", "confirmed with passkey, with plantctl": never a code or an id of a factor. */
export function describeSignIn(details: Record<string, unknown>): string {
  const amr = Array.isArray(details.amr) ? details.amr : [];
  const how = `${details.step_up === true ? 'confirmed with' : 'with'} ${factorOf(amr)}`;
  const client = details.client_id;
  if (client === PORTAL_CLIENT_ID) return `${how}, to the portal`;
  if (client === PLANTCTL_CLIENT_ID) return `${how}, with plantctl`;
  if (typeof client === 'string' && client !== '') return `${how}, to ${client}`;
  return how;
}
