/**
 * Second factors at the realm: what a sign-in asks after the password, the one-time codes and
 * recovery codes it accepts, the enrolments, and the factor list a person (or an Account
 * Admin, or the operator) manages. Passkeys are in passkeys.ts.
 *
 * What the portal learns is only the outcome, in the ID token: `acr` is FACTOR_ACR when a second
 * factor (or a passkey, multi-factor on its own: possession and user verification) was verified
 * at `auth_time`, PASSWORD_ACR otherwise; `amr` names the methods (RFC 8176).
 *
 * Code attempts spend the same kind of budget as passwords (attempt-budget.ts) in a counter
 * family of their own: per source, per (person, source), per person from everywhere. A right
 * code gives its points back, so the budget only limits guessing, and the windows expire, so
 * nobody is locked out for good.
 */
import { randomUUID } from 'node:crypto';
import { meets, takePrecondition } from '@plant/shared/http';
import {
  FACTOR_REVISION,
  type FactorPolicy,
  type RevocationEntry,
  type UserRole,
} from '@plant/shared/token-service-client';
import type { FactorView, SignInPerson } from './user-factor-repository.js';
import {
  DuplicateFactor,
  FactorNotFound,
  PreconditionFailed,
  TenantNotFound,
  UserNotFound,
  type IdentityContext,
} from '../platform/index.js';
import { newRecoveryCodes, normalizeRecoveryCode, recoveryCodeDigest } from './recovery-codes.js';
import { type AttemptBudget, isRefusal } from './attempt-budget.js';
import { matchTotp, newTotpSecret, normalizeTotpCode, totpUri } from './totp.js';

export const FACTOR_ACR = 'urn:plantstore:acr:factor';
export const PASSWORD_ACR = 'urn:plantstore:acr:password';
export const ACR_VALUES = [PASSWORD_ACR, FACTOR_ACR];

/** RFC 8176 method references. */
export const AMR = {
  password: ['pwd'],
  /** An authenticator app's code after the password. */
  totp: ['pwd', 'otp', 'mfa'],
  /** A recovery code after the password: a one-time code of another kind. */
  recoveryCode: ['pwd', 'otp', 'mfa'],
  /** A passkey with user verification: possession of a key and a PIN or biometric. */
  passkey: ['hwk', 'user', 'mfa'],
} as const;

/** What the portal may ask the realm to do inside a sign-in (`plant_action`). */
export const PLANT_ACTIONS = ['enrol-passkey', 'enrol-totp', 'recovery-codes'] as const;
export type PlantAction = (typeof PLANT_ACTIONS)[number];
export const isPlantAction = (value: unknown): value is PlantAction =>
  typeof value === 'string' && (PLANT_ACTIONS as readonly string[]).includes(value);

export interface FactorDeps {
  identity: Pick<IdentityContext, 'userFactors' | 'secrets' | 'encryption'> &
    Partial<Pick<IdentityContext, 'publisher'>>;
  /** The code and passkey attempts' budget (a family of counters of its own). */
  throttle: AttemptBudget;
}

/**
 * After the commit of a change to the person's factors: every replica hears their new version
 * (the CLI has no publisher; resource servers' periodic resync reads the change feed).
 */
export async function publishAfterCommit(
  deps: { identity: { publisher?: ChangePublisher | undefined } },
  ...entries: Array<RevocationEntry | undefined>
): Promise<void> {
  for (const entry of entries)
    if (entry && deps.identity.publisher) await deps.identity.publisher.publish(entry);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const hasSecondFactor = (person: Pick<SignInPerson, 'passkeys' | 'totp'>): boolean =>
  person.passkeys > 0 || person.totp;

/** Whether the realm's policy makes this person enrol a factor before a sign-in completes. */
export function mustEnrol(person: SignInPerson): boolean {
  return (
    !hasSecondFactor(person) &&
    person.role === ('Account Admin' satisfies UserRole) &&
    person.requireAdminFactor
  );
}

/** What comes after the person is known (by password, or by the realm's session for a step-up). */
export type NextStep = 'factor' | 'enrol' | 'finish';

export function nextStep(person: SignInPerson, action: PlantAction | undefined): NextStep {
  if (hasSecondFactor(person)) return 'factor';
  if (action !== undefined || mustEnrol(person)) return 'enrol';
  return 'finish';
}

export type CodeOutcome =
  | { kind: 'verified'; method: 'totp' | 'recovery-code'; amr: readonly string[] }
  | { kind: 'wrong' }
  | { kind: 'throttled'; retryAfterSeconds: number };

/** The throttle's key for a person: never the code, the person's id within the realm. */
const budgetKey = (sub: string) => `factor:${sub}`;

interface Attempt {
  tenant: string;
  sub: string;
  email: string;
  /** The client's address (the proxy's view when trusted). */
  ip: string;
}

/** Checks a typed code: six digits against the authenticator app, otherwise as a recovery code. */
export async function verifyCode(
  deps: FactorDeps,
  attempt: Attempt & { code: string },
): Promise<CodeOutcome> {
  const source = await deps.throttle.reserveSource(attempt.ip);
  if (isRefusal(source)) return { kind: 'throttled', retryAfterSeconds: source.retryAfterSeconds };
  const held = await deps.throttle.reserveAccount(source, attempt.tenant, budgetKey(attempt.sub));
  if (isRefusal(held)) return { kind: 'throttled', retryAfterSeconds: held.retryAfterSeconds };
  let method: 'totp' | 'recovery-code' | undefined;
  try {
    method = await checkCode(deps, attempt);
  } catch (err) {
    await deps.throttle.release(held);
    throw err;
  }
  if (method === undefined) return { kind: 'wrong' };
  await deps.throttle.succeeded(held);
  return {
    kind: 'verified',
    method,
    amr: method === 'totp' ? AMR.totp : AMR.recoveryCode,
  };
}

async function checkCode(
  deps: FactorDeps,
  attempt: Attempt & { code: string },
): Promise<'totp' | 'recovery-code' | undefined> {
  const { userFactors, encryption, secrets } = deps.identity;
  const totpCode = normalizeTotpCode(attempt.code);
  if (totpCode !== undefined) {
    const totp = await userFactors.totpOf(attempt.tenant, attempt.sub);
    if (!totp) return undefined;
    const secret = encryption.decrypt(totp.sealed, totpContext(totp.id));
    const step = matchTotp(secret, totpCode);
    // A step at or before the last accepted one is a code already used (or older): refused.
    if (step === undefined) return undefined;
    return (await userFactors.claimTotpStep(attempt.tenant, attempt.sub, totp.id, step))
      ? 'totp'
      : undefined;
  }
  const recovery = normalizeRecoveryCode(attempt.code);
  if (recovery === undefined) return undefined;
  const used = await userFactors.useRecoveryCode(
    attempt.tenant,
    attempt.sub,
    recoveryCodeDigest(secrets, attempt.sub, recovery),
    {
      action: 'factor.recovery_code_used',
      actorSub: attempt.sub,
      actorEmail: attempt.email,
      targetSub: attempt.sub,
      targetEmail: attempt.email,
      address: attempt.ip,
    },
  );
  return used ? 'recovery-code' : undefined;
}

/** The associated data binding a sealed TOTP secret to its factor row. */
const totpContext = (factorId: string) => `totp:${factorId}`;
/** ...and a pending one to the sign-in that shows it. */
const pendingContext = (interaction: string) => `totp-enrolment:${interaction}`;

export interface PendingTotp {
  /** Shown to the person (text), never stored in clear. */
  secret: string;
  uri: string;
  /** The secret sealed for the interaction's state (base64). */
  sealed: string;
}

/** A new authenticator-app secret for `interaction`: shown, and kept sealed until its first code confirms it. */
export function startTotpEnrolment(
  deps: Pick<FactorDeps, 'identity'>,
  input: { tenant: string; email: string; interaction: string },
): PendingTotp {
  const secret = newTotpSecret();
  return {
    secret,
    uri: totpUri(secret, `Plant Store (${input.tenant})`, input.email),
    sealed: deps.identity.encryption
      .encrypt(secret, pendingContext(input.interaction))
      .toString('base64'),
  };
}

/** The secret of a pending enrolment (for showing it again after a wrong code). */
export function pendingTotp(
  deps: Pick<FactorDeps, 'identity'>,
  input: { tenant: string; email: string; interaction: string; sealed: string },
): PendingTotp {
  const secret = deps.identity.encryption.decrypt(
    Buffer.from(input.sealed, 'base64'),
    pendingContext(input.interaction),
  );
  return {
    secret,
    uri: totpUri(secret, `Plant Store (${input.tenant})`, input.email),
    sealed: input.sealed,
  };
}

export type TotpEnrolment =
  | { kind: 'enrolled'; recoveryCodes: string[] }
  | { kind: 'wrong' }
  | { kind: 'exists' };

/** Confirms a pending secret with its first code; stores it and a new set of recovery codes. */
export async function confirmTotpEnrolment(
  deps: Pick<FactorDeps, 'identity'>,
  input: Attempt & { interaction: string; sealed: string; code: string; generation: number },
): Promise<TotpEnrolment> {
  const { encryption, userFactors, secrets } = deps.identity;
  const code = normalizeTotpCode(input.code);
  const { secret } = pendingTotp(deps, input);
  const step = code === undefined ? undefined : matchTotp(secret, code);
  if (step === undefined) return { kind: 'wrong' };
  const id = randomUUID();
  const recoveryCodes = newRecoveryCodes();
  let revocation: RevocationEntry | undefined;
  try {
    revocation = await userFactors.addTotp(
      input.tenant,
      input.sub,
      {
        id,
        label: 'Authenticator app',
        sealed: encryption.encrypt(secret, totpContext(id)),
        step,
        generation: input.generation,
      },
      recoveryCodes.map((c) => recoveryCodeDigest(secrets, input.sub, c)),
      {
        actorSub: input.sub,
        actorEmail: input.email,
        targetSub: input.sub,
        targetEmail: input.email,
        details: { kind: 'totp', factor_id: id },
        address: input.ip,
      },
    );
  } catch (err) {
    if (err instanceof DuplicateFactor) return { kind: 'exists' };
    throw err;
  }
  await publishAfterCommit(deps, revocation);
  return { kind: 'enrolled', recoveryCodes };
}

/** A new set of ten recovery codes (the old set stops working), shown once. */
export async function replaceRecoveryCodes(
  deps: Pick<FactorDeps, 'identity'>,
  input: Omit<Attempt, 'ip'> & { ip: string | null },
): Promise<string[]> {
  const { userFactors, secrets } = deps.identity;
  const codes = newRecoveryCodes();
  await userFactors.replaceRecoveryCodes(
    input.tenant,
    input.sub,
    codes.map((c) => recoveryCodeDigest(secrets, input.sub, c)),
    {
      actorSub: input.sub,
      actorEmail: input.email,
      targetSub: input.sub,
      targetEmail: input.email,
      address: input.ip,
    },
  );
  return codes;
}

/** A factor as the internal API lists it. */
export interface FactorListItem {
  id: string;
  kind: 'passkey' | 'totp';
  label: string;
  created_at: string;
  last_used_at: string | null;
}

const view = (row: FactorView): FactorListItem => ({
  id: row.id,
  kind: row.kind,
  label: row.label,
  created_at: new Date(row.created_at).toISOString(),
  last_used_at: row.last_used_at === null ? null : new Date(row.last_used_at).toISOString(),
});

/** Where a change's revocation entry is announced after commit (the service's publisher, or the CLI's). */
export interface ChangePublisher {
  publish(entry: RevocationEntry): Promise<unknown>;
}

/** What managing factors needs (the CLI builds it without keys, with a publisher of its own). */
export interface ManageDeps {
  identity: Pick<IdentityContext, 'userFactors'> & { publisher?: ChangePublisher | undefined };
}

export interface Actor {
  sub: string | null;
  email?: string | null;
  address?: string | null;
}

async function personOrNotFound(
  deps: ManageDeps,
  tenant: string,
  sub: string,
): Promise<SignInPerson> {
  const person = await deps.identity.userFactors.person(tenant, sub);
  if (!person) throw new UserNotFound();
  return person;
}

export async function listFactors(
  deps: ManageDeps,
  tenant: string,
  sub: string,
): Promise<{ factors: FactorListItem[]; recovery_codes_left: number }> {
  const person = await personOrNotFound(deps, tenant, sub);
  const rows = await deps.identity.userFactors.list(tenant, sub);
  return { factors: rows.map(view), recovery_codes_left: person.recoveryCodesLeft };
}

export async function removeFactor(
  deps: ManageDeps,
  input: { tenant: string; sub: string; factorId: string; actor: Actor },
): Promise<void> {
  // `If-Match` (conditionalRoute): a held factor is always at FACTOR_REVISION; the deleting
  // statement itself decides a race, as only one finds the factor still there.
  const precondition = takePrecondition();
  if (precondition !== undefined && !meets(precondition, FACTOR_REVISION))
    throw new PreconditionFailed();
  const person = await personOrNotFound(deps, input.tenant, input.sub);
  // Factor ids are UUIDs: anything else names no factor (and never reaches a uuid column).
  if (!UUID.test(input.factorId)) throw new FactorNotFound();
  const outcome = await deps.identity.userFactors.remove(input.tenant, input.sub, input.factorId, {
    actorSub: input.actor.sub,
    actorEmail: input.actor.email ?? null,
    targetSub: input.sub,
    targetEmail: person.email,
    details: { factor_id: input.factorId },
    address: input.actor.address ?? null,
  });
  if (!outcome.removed) throw new FactorNotFound();
  await publishAfterCommit(deps, outcome.revocation);
}

/** Every factor and recovery code of the person goes (an Account Admin's or the operator's reset). */
export async function resetFactors(
  deps: ManageDeps,
  input: { tenant: string; sub: string; actor: Actor },
): Promise<{ removed: number }> {
  const person = await personOrNotFound(deps, input.tenant, input.sub);
  const { removed, revocation } = await deps.identity.userFactors.reset(input.tenant, input.sub, {
    actorSub: input.actor.sub,
    actorEmail: input.actor.email ?? null,
    targetSub: input.sub,
    targetEmail: person.email,
    address: input.actor.address ?? null,
  });
  await publishAfterCommit(deps, revocation);
  return { removed };
}

/** The realm's policy: must an Account Admin hold a second factor? */
export async function getFactorPolicy(deps: ManageDeps, tenant: string): Promise<FactorPolicy> {
  const value = await deps.identity.userFactors.policy(tenant);
  if (value === undefined) throw new TenantNotFound();
  return { require_admin_factor: value.requireAdminFactor, revision: value.revision };
}

export async function setFactorPolicy(
  deps: ManageDeps,
  input: { tenant: string; requireAdminFactor: boolean; actor: Actor },
): Promise<FactorPolicy> {
  const changed = await deps.identity.userFactors.setPolicy(
    input.tenant,
    input.requireAdminFactor,
    {
      actorSub: input.actor.sub,
      actorEmail: input.actor.email ?? null,
      address: input.actor.address ?? null,
    },
  );
  if (changed === false) throw new TenantNotFound();
  await publishAfterCommit(deps, ...changed.entries);
  return {
    require_admin_factor: changed.policy.requireAdminFactor,
    revision: changed.policy.revision,
  };
}
