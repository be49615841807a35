import type { SignInCredentialRow } from '../people/index.js';
import type { IdentityContext } from '../platform/index.js';
import {
  type CheckerSlot,
  DUMMY_PASSWORD_HASH,
  type PasswordCheckers,
} from '../passwords/index.js';
import { isStorableText } from '@plant/shared/api';
import { isRefusal, type SignInReservation, type SignInThrottle } from './sign-in-throttle.js';

export interface SignInDeps {
  identity: Pick<IdentityContext, 'users'>;
  throttle: SignInThrottle;
  checkers: PasswordCheckers;
}

export interface SignInAttempt {
  tenant: string;
  email: string;
  password: string;
}

/** Every password checker of this process is busy. */
export interface SignInBusy {
  kind: 'busy';
  retryAfterSeconds: number;
}

/** A failure budget (the source's, or the account's) is spent. */
export interface SignInThrottled {
  kind: 'throttled';
  retryAfterSeconds: number;
}

/** A sign-in let in: a password checker held for it, and its source's point taken. */
export interface SignInAdmitted {
  kind: 'admitted';
  readonly slot: CheckerSlot;
  readonly source: SignInReservation;
}

export type SignInAdmission = SignInAdmitted | SignInBusy | SignInThrottled;

export type SignInOutcome =
  | { kind: 'signed-in'; accountId: string }
  | { kind: 'wrong-credentials' }
  /** The account's failure budget is spent. */
  | SignInThrottled;

const BUSY: SignInBusy = { kind: 'busy', retryAfterSeconds: 1 };

/**
 * The door of a sign-in, before anything else is spent on it (its interaction, a query): a
 * password checker is held for it at once (every one busy: refused, nothing spent), then its
 * source's point is taken (one Redis round trip; none left: refused, the checker let go). A
 * storm of attempts is answered here, so what a refusal costs is this and its page. The email
 * plays no part yet, so a refusal tells nothing about it.
 */
export async function admitSignIn(deps: SignInDeps, ip: string): Promise<SignInAdmission> {
  const slot = deps.checkers.reserve();
  if (slot === undefined) return BUSY;
  let source: Awaited<ReturnType<SignInThrottle['reserveSource']>>;
  try {
    source = await deps.throttle.reserveSource(ip);
  } catch (err) {
    slot.release();
    throw err;
  }
  if (isRefusal(source)) {
    slot.release();
    return { kind: 'throttled', retryAfterSeconds: source.retryAfterSeconds };
  }
  return { kind: 'admitted', slot, source };
}

/** An admitted sign-in that ends before its check (its interaction is gone): the checker and the point go back. */
export async function abandonSignIn(deps: SignInDeps, admitted: SignInAdmitted): Promise<void> {
  admitted.slot.release();
  await deps.throttle.release(admitted.source);
}

/**
 * An admitted sign-in's check. An unknown email goes the same way as a known one (the same
 * query, the same points, a hash of the same cost against a dummy), so neither the answer nor
 * its timing tells which emails exist. Points are taken before the hash and given back only
 * when no check happened or it succeeded (`SignInThrottle`). The checker held at the door is
 * used or let go on every path.
 */
export async function authenticateUser(
  deps: SignInDeps,
  admitted: SignInAdmitted,
  attempt: SignInAttempt,
): Promise<SignInOutcome> {
  const { slot, source } = admitted;
  const checkable = attempt.email !== '' && attempt.password !== '';
  let credential: SignInCredentialRow | undefined;
  let held: Awaited<ReturnType<SignInThrottle['reserveAccount']>>;
  try {
    credential =
      checkable && isStorableText(attempt.email)
        ? await deps.identity.users.findSignInCredential(attempt.tenant, attempt.email)
        : undefined;
    held = await deps.throttle.reserveAccount(
      source,
      attempt.tenant,
      credential?.email_key ?? attempt.email.toLowerCase(),
    );
  } catch (err) {
    await abandonSignIn(deps, admitted);
    throw err;
  }
  if (isRefusal(held)) {
    slot.release();
    return { kind: 'throttled', retryAfterSeconds: held.retryAfterSeconds };
  }
  // A form posted without a password (or an email) is a failure that needs no hash.
  if (!checkable) {
    slot.release();
    return { kind: 'wrong-credentials' };
  }
  let ok: boolean;
  try {
    ok = await slot.verify(attempt.password, credential?.password_hash ?? DUMMY_PASSWORD_HASH);
  } catch (err) {
    await deps.throttle.release(held);
    throw err;
  }
  if (!ok || !credential?.sub) return { kind: 'wrong-credentials' };
  await deps.throttle.succeeded(held);
  return { kind: 'signed-in', accountId: credential.sub };
}
