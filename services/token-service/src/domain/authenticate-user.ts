import type { SignInCredentialRow } from '../data-access/user-repository.js';
import type { IdentityContext } from './identity-context.js';
import type { PasswordCheckers } from './password-checkers.js';
import { DUMMY_PASSWORD_HASH } from './passwords.js';
import { isStorableText } from './principal-validators.js';
import { isRefusal, type SignInThrottle } from './sign-in-throttle.js';

export interface SignInDeps {
  identity: Pick<IdentityContext, 'users'>;
  throttle: SignInThrottle;
  checkers: PasswordCheckers;
}

export interface SignInAttempt {
  tenant: string;
  email: string;
  password: string;
  /** The client's address (the proxy's view when trusted). */
  ip: string;
}

/** Every password checker of this process is busy. */
export interface SignInBusy {
  kind: 'busy';
  retryAfterSeconds: number;
}

export type SignInOutcome =
  | { kind: 'signed-in'; accountId: string }
  | { kind: 'wrong-credentials' }
  /** The failure budget of the source or the account is spent. */
  | { kind: 'throttled'; retryAfterSeconds: number }
  | SignInBusy;

const BUSY: SignInBusy = { kind: 'busy', retryAfterSeconds: 1 };

/** The answer to a sign-in while every password checker is busy (nothing else is spent on it); undefined when one is free. */
export function refuseWhileBusy(deps: Pick<SignInDeps, 'checkers'>): SignInBusy | undefined {
  return deps.checkers.full ? BUSY : undefined;
}

/**
 * A sign-in: budget first, then the check. An unknown email goes the same way as a known one
 * (the same query, the same points, a hash of the same cost against a dummy), so neither the
 * answer nor its timing tells which emails exist. Points are taken before the hash and
 * given back only when no check happened or it succeeded (`SignInThrottle`).
 */
export async function authenticateUser(
  deps: SignInDeps,
  attempt: SignInAttempt,
): Promise<SignInOutcome> {
  // With every checker busy, refuse before spending a query or a counter on the attempt.
  const busy = refuseWhileBusy(deps);
  if (busy) return busy;
  const source = await deps.throttle.reserveSource(attempt.ip);
  if (isRefusal(source)) return { kind: 'throttled', retryAfterSeconds: source.retryAfterSeconds };
  const checkable = attempt.email !== '' && attempt.password !== '';
  let credential: SignInCredentialRow | undefined;
  try {
    credential =
      checkable && isStorableText(attempt.email)
        ? await deps.identity.users.findSignInCredential(attempt.tenant, attempt.email)
        : undefined;
  } catch (err) {
    await deps.throttle.release(source);
    throw err;
  }
  const held = await deps.throttle.reserveAccount(
    source,
    attempt.tenant,
    credential?.email_key ?? attempt.email.toLowerCase(),
  );
  if (isRefusal(held)) return { kind: 'throttled', retryAfterSeconds: held.retryAfterSeconds };
  // A form posted without a password (or an email) is a failure that needs no hash.
  if (!checkable) return { kind: 'wrong-credentials' };
  const check = deps.checkers.tryVerify(
    attempt.password,
    credential?.password_hash ?? DUMMY_PASSWORD_HASH,
  );
  if (check === undefined) {
    await deps.throttle.release(held);
    return BUSY;
  }
  let ok: boolean;
  try {
    ok = await check;
  } catch (err) {
    await deps.throttle.release(held);
    throw err;
  }
  if (!ok || !credential?.sub) return { kind: 'wrong-credentials' };
  await deps.throttle.succeeded(held);
  return { kind: 'signed-in', accountId: credential.sub };
}
