/**
 * Passkeys (WebAuthn, @simplewebauthn/server): registration and authentication ceremonies at
 * the realm. The relying party is the token service's own host (WEBAUTHN_RP_ID, by default
 * AUTH_URL's hostname) and the expected origin AUTH_URL's origin, so a passkey works whatever
 * host the portal has. Passkeys are discoverable (resident key required) and verify the user
 * (PIN or biometric), so one alone signs a person in without a password and counts as two
 * factors. Attestation is not asked for (`none`): the platform trusts any authenticator the
 * person chooses, as peers do for passkeys.
 *
 * Every challenge is single-use and bound to the sign-in that asked for it
 * (webauthn-challenge-repository.ts). Failed assertions spend the code attempts' budget.
 */
import { randomUUID } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { RevocationEntry } from '@plant/shared/token-service-client';
import type { WebAuthnChallengeRepository } from './webauthn-challenge-repository.js';
import type { PasskeyRow } from './passkey-repository.js';
import { DuplicateFactor, type IdentityContext } from '../platform/index.js';
import { AMR, publishAfterCommit } from './second-factors.js';
import { type AttemptBudget, isRefusal } from './attempt-budget.js';

export interface RelyingParty {
  /** The RP ID: a registrable domain suffix of the origin's host. */
  id: string;
  /** The origin browsers report (AUTH_URL's). */
  origin: string;
  name: string;
}

export interface PasskeyDeps {
  identity: Pick<IdentityContext, 'userFactors'> & Partial<Pick<IdentityContext, 'publisher'>>;
  challenges: WebAuthnChallengeRepository;
  throttle: AttemptBudget;
  rp: RelyingParty;
}

interface Ceremony {
  tenant: string;
  /** The interaction (sign-in) the challenge belongs to. */
  interaction: string;
  /** Seconds the interaction has left: the challenge lives no longer. */
  ttlSeconds: number;
}

const transportsOf = (row: PasskeyRow) =>
  (row.transports ?? undefined) as AuthenticatorTransport[] | undefined;

export async function registrationOptions(
  deps: PasskeyDeps,
  input: Ceremony & { sub: string; email: string },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await deps.identity.userFactors.passkeysOf(input.tenant, input.sub);
  const options = await generateRegistrationOptions({
    rpName: deps.rp.name,
    rpID: deps.rp.id,
    userName: input.email,
    userDisplayName: input.email,
    // The user handle is the person's id: a discoverable sign-in names the person by it.
    userID: new TextEncoder().encode(input.sub),
    attestationType: 'none',
    excludeCredentials: existing.map((row) => ({
      id: row.credentialId,
      transports: transportsOf(row),
    })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    // EdDSA, ES256, RS256: what authenticators make; each is checked at a bounded cost.
    supportedAlgorithmIDs: [-8, -7, -257],
  });
  await deps.challenges.put(
    input.tenant,
    input.interaction,
    'register',
    options.challenge,
    input.ttlSeconds,
  );
  return options;
}

/** The response's JSON as the browser posted it, if it is an object at all. */
function parsed<T>(json: string): T | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as T)
      : undefined;
  } catch {
    return undefined;
  }
}

export type PasskeyRegistration = { kind: 'enrolled'; factorId: string } | { kind: 'refused' };

export async function finishRegistration(
  deps: PasskeyDeps,
  input: Omit<Ceremony, 'ttlSeconds'> & {
    sub: string;
    email: string;
    response: string;
    ip: string;
    /** The factor generation the sign-in began at (StaleFactorGeneration once it moved). */
    generation: number;
  },
): Promise<PasskeyRegistration> {
  // Taken first, whatever the response: a challenge is spent by any answer to it.
  const challenge = await deps.challenges.take(input.tenant, input.interaction, 'register');
  const response = parsed<RegistrationResponseJSON>(input.response);
  if (challenge === undefined || response === undefined) return { kind: 'refused' };
  let info: Awaited<ReturnType<typeof verifyRegistrationResponse>>['registrationInfo'];
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: deps.rp.origin,
      expectedRPID: deps.rp.id,
      requireUserVerification: true,
    });
    info = result.verified ? result.registrationInfo : undefined;
  } catch {
    info = undefined;
  }
  if (info === undefined) return { kind: 'refused' };
  const factorId = randomUUID();
  let revocation: RevocationEntry | undefined;
  try {
    revocation = await deps.identity.userFactors.addPasskey(
      input.tenant,
      input.sub,
      {
        id: factorId,
        label: 'Passkey',
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey),
        signCount: info.credential.counter,
        transports: info.credential.transports ?? [],
        aaguid: info.aaguid,
        backedUp: info.credentialBackedUp,
        generation: input.generation,
      },
      {
        actorSub: input.sub,
        actorEmail: input.email,
        targetSub: input.sub,
        targetEmail: input.email,
        details: { kind: 'passkey', factor_id: factorId },
        address: input.ip,
      },
    );
  } catch (err) {
    if (err instanceof DuplicateFactor) return { kind: 'refused' };
    throw err;
  }
  await publishAfterCommit(deps, revocation);
  return { kind: 'enrolled', factorId };
}

/**
 * Options for an assertion: the person's passkeys when the person is known (a second factor),
 * none for a discoverable sign-in (the authenticator offers what it holds for this RP).
 */
export async function authenticationOptions(
  deps: PasskeyDeps,
  input: Ceremony & { sub?: string },
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const allow =
    input.sub === undefined
      ? []
      : (await deps.identity.userFactors.passkeysOf(input.tenant, input.sub)).map((row) => ({
          id: row.credentialId,
          transports: transportsOf(row),
        }));
  const options = await generateAuthenticationOptions({
    rpID: deps.rp.id,
    allowCredentials: allow,
    userVerification: 'required',
  });
  await deps.challenges.put(
    input.tenant,
    input.interaction,
    'authenticate',
    options.challenge,
    input.ttlSeconds,
  );
  return options;
}

export type PasskeyAuthentication =
  | { kind: 'verified'; sub: string; amr: readonly string[] }
  | { kind: 'refused' }
  | { kind: 'throttled'; retryAfterSeconds: number };

async function verifyAssertion(
  deps: PasskeyDeps,
  response: AuthenticationResponseJSON,
  challenge: string,
  row: PasskeyRow,
): Promise<boolean> {
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: deps.rp.origin,
      expectedRPID: deps.rp.id,
      credential: {
        id: row.credentialId,
        publicKey: new Uint8Array(row.publicKey),
        counter: row.signCount,
        transports: transportsOf(row),
      },
      requireUserVerification: true,
    });
  } catch {
    return false;
  }
  if (!verified.verified) return false;
  // Authenticators that count (most passkeys send 0 always) must count up: a step back is a clone.
  return deps.identity.userFactors.usePasskey(
    row.id,
    row.signCount,
    Math.max(verified.authenticationInfo.newCounter, row.signCount),
  );
}

/**
 * Verifies an assertion against the realm's passkeys. `expectedSub`: the person already known
 * (a second factor after the password, or a step-up); absent: a discoverable sign-in, where the
 * credential names the person.
 */
export async function finishAuthentication(
  deps: PasskeyDeps,
  input: {
    tenant: string;
    interaction: string;
    response: string;
    ip: string;
    expectedSub?: string;
  },
): Promise<PasskeyAuthentication> {
  const challenge = await deps.challenges.take(input.tenant, input.interaction, 'authenticate');
  const source = await deps.throttle.reserveSource(input.ip);
  if (isRefusal(source)) return { kind: 'throttled', retryAfterSeconds: source.retryAfterSeconds };
  const response = parsed<AuthenticationResponseJSON>(input.response);
  const credentialId = typeof response?.id === 'string' ? response.id.slice(0, 1024) : undefined;
  const row =
    credentialId === undefined
      ? undefined
      : await deps.identity.userFactors.passkeyByCredentialId(input.tenant, credentialId);
  const sub = input.expectedSub ?? row?.sub;
  // An unknown credential spends the source's point only; a known person's budget is theirs.
  if (sub === undefined || row === undefined || challenge === undefined || response === undefined)
    return { kind: 'refused' };
  const held = await deps.throttle.reserveAccount(source, input.tenant, `factor:${sub}`);
  if (isRefusal(held)) return { kind: 'throttled', retryAfterSeconds: held.retryAfterSeconds };
  const ok = row.sub === sub && (await verifyAssertion(deps, response, challenge, row));
  if (!ok) return { kind: 'refused' };
  await deps.throttle.succeeded(held);
  return { kind: 'verified', sub, amr: AMR.passkey };
}
