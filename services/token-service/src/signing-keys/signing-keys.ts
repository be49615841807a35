/**
 * A realm's signing keys: one active key signs its tokens, retired keys stay published until
 * every token they signed has expired, and the realm's algorithm is its active key's. Changing
 * the algorithm is a rotation, so keys change one way and one rule says how long an old key
 * stays in the JWKS. Private keys are stored only encrypted (key-encryption.ts).
 */
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import {
  DEFAULT_SIGNING_ALGORITHM,
  isSigningAlgorithm,
  SIGNING_ALGORITHMS,
  type SigningAlgorithm,
} from '@plant/shared/api';
import { z } from 'zod';
import { TenantNotFound, type IdentityContext } from '../platform/index.js';
import type { KeyEncryption } from './key-encryption.js';
import { THUMBPRINT_MEMBERS, thumbprintOf } from '../credentials/index.js';
import { effectsOf } from '../changes/index.js';

export {
  DEFAULT_SIGNING_ALGORITHM,
  SIGNING_ALGORITHMS,
  type SigningAlgorithm,
} from '@plant/shared/api';

const generate = promisify(generateKeyPair);

export interface NewSigningKey {
  kid: string;
  publicJwk: Record<string, unknown>;
  privateKeyEncrypted: Buffer;
}

function generateFor(alg: SigningAlgorithm) {
  return alg === 'ES256'
    ? generate('ec', { namedCurve: 'P-256' })
    : generate('rsa', { modulusLength: 2048 });
}

/**
 * A fresh key for `alg`: RSA-2048 for RS256, P-256 for ES256. The private JWK leaves this
 * function only encrypted; the public JWK names its `alg`, which resource servers pin the key to.
 */
export async function createSigningKey(
  encryption: KeyEncryption,
  alg: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM,
): Promise<NewSigningKey> {
  const { publicKey, privateKey } = await generateFor(alg);
  const publicJwk = publicKey.export({ format: 'jwk' });
  const kid = thumbprintOf(publicJwk as Record<string, unknown>);
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  // The public JWK is its thumbprint's members (RFC 7638), nothing else of the export.
  const members = Object.fromEntries(
    THUMBPRINT_MEMBERS[publicJwk.kty!]!.map((member) => [
      member,
      (publicJwk as Record<string, unknown>)[member],
    ]),
  );
  return {
    kid,
    publicJwk: { ...members, kid, alg, use: 'sig' },
    privateKeyEncrypted: encryption.encrypt(JSON.stringify(privateJwk), kid),
  };
}

/**
 * The algorithm a stored key signs with. Keys written before realms had a choice carry
 * `alg: RS256` as well, so a key without a known `alg` is an error, never a guess.
 */
export function algorithmOf(jwk: Record<string, unknown>): SigningAlgorithm {
  if (!isSigningAlgorithm(jwk.alg))
    throw new TypeError(`signing key ${String(jwk.kid)} has no supported alg`);
  return jwk.alg;
}

export function decryptSigningKey(
  encryption: KeyEncryption,
  kid: string,
  sealed: Buffer,
): Record<string, unknown> {
  return JSON.parse(encryption.decrypt(sealed, kid)) as Record<string, unknown>;
}

export const SigningAlgorithmSchema = z.enum(SIGNING_ALGORITHMS, {
  error: `alg must be one of ${SIGNING_ALGORITHMS.map((alg) => `"${alg}"`).join(', ')}`,
});

export const SetSigningAlgorithmSchema = z.object(
  { alg: SigningAlgorithmSchema },
  { error: 'body must be a JSON object' },
);

/** Clock skew resource servers may allow on exp. */
const CLOCK_SKEW_SECONDS = 60;

/** The realm's JWKS: the active key first, then keys retired less than a token lifetime (+ skew) ago. */
export async function getPublishedKeys(
  ctx: Pick<IdentityContext, 'signingKeys' | 'realms'>,
  tenant: string,
  accessTokenTtl: number,
): Promise<{ keys: Record<string, unknown>[] }> {
  const rows = await ctx.signingKeys.findPublished(tenant, accessTokenTtl + CLOCK_SKEW_SECONDS);
  if (rows.length === 0 && !(await ctx.realms.find(tenant))) throw new TenantNotFound();
  return { keys: rows.map((row) => row.public_jwk) };
}

export interface RealmSigning {
  tenant: string;
  /** What the realm's access and ID tokens are signed with from now on. */
  alg: SigningAlgorithm;
  /** The active key's id (the `kid` of new tokens). */
  kid: string;
}

/** The algorithm and key a realm signs with: its active key's. */
export async function getSigningAlgorithm(
  ctx: Pick<IdentityContext, 'signingKeys'>,
  tenant: string,
): Promise<RealmSigning> {
  const active = await ctx.signingKeys.findActive(tenant);
  if (active === undefined) throw new TenantNotFound();
  return { tenant, alg: algorithmOf(active.public_jwk), kid: active.kid };
}

export interface SigningChange extends RealmSigning {
  /** Whether a new key was made active (false: the realm already signed with `alg`). */
  rotated: boolean;
  /** Keys retired by this change (they stay published for a token lifetime plus skew). */
  retired: number;
}

/**
 * Makes the realm sign with `alg`. A change of algorithm is a key rotation: a new key of that
 * type signs from then on, and the old one stays in the JWKS until every token it signed has
 * expired. Setting the algorithm the realm already uses changes nothing (idempotent: a retried
 * request, or two operators at once, rotate once), decided under the realm's lock.
 */
export async function setSigningAlgorithm(
  ctx: Pick<IdentityContext, 'signingKeys' | 'encryption'>,
  tenant: string,
  alg: SigningAlgorithm,
): Promise<SigningChange> {
  const current = await getSigningAlgorithm(ctx, tenant);
  if (current.alg === alg) return { ...current, rotated: false, retired: 0 };
  const key = await createSigningKey(ctx.encryption, alg);
  const outcome = await ctx.signingKeys.rotate(tenant, key, { unlessActiveAlg: alg });
  if (outcome === undefined) throw new TenantNotFound();
  if (!outcome.rotated)
    return { tenant, alg, kid: outcome.active!.kid, rotated: false, retired: 0 };
  return { tenant, alg, kid: key.kid, rotated: true, retired: outcome.retired };
}

export interface RotatedKey {
  tenant: string;
  kid: string;
  alg: SigningAlgorithm;
  retired: number;
}

/**
 * What a rotation publishes after commit, as the effects table lists it for
 * `realm.signing-key-rotate` (changes/change-effects.ts): the realm on the key channel, which
 * `announceKeyChange` sends, so every replica reloads the realm's keys. Both that rotate, the
 * internal route and the CLI, publish through this.
 */
export async function publishRotation(
  announceKeyChange: (tenant: string) => Promise<void>,
  tenant: string,
): Promise<void> {
  if (effectsOf('realm.signing-key-rotate').publishes === 'key-change')
    await announceKeyChange(tenant);
}

/** A plain rotation that lost to a concurrent change of algorithm is tried again this often. */
const MAX_ROTATION_ATTEMPTS = 3;

/**
 * Retires the active key and makes a new one active: of `alg` when the operator names one (an
 * algorithm switch), otherwise of the algorithm the realm signs with now. The retired public
 * key stays in the JWKS until every token it signed has expired (ACCESS_TOKEN_TTL + clock
 * skew, `getPublishedKeys`). A plain rotation generates its key outside the transaction,
 * so it rotates only while the realm still signs with that algorithm: one that commits after
 * a switch keeps the switch rather than undoing it. An unknown realm is refused before a key is
 * generated (an RSA key costs the caller tens of milliseconds for nothing).
 */
export async function rotateSigningKey(
  ctx: Pick<IdentityContext, 'signingKeys' | 'realms' | 'encryption'>,
  tenant: string,
  alg?: SigningAlgorithm,
): Promise<RotatedKey> {
  for (let attempt = 1; ; attempt += 1) {
    const active = await currentAlgorithm(ctx, tenant);
    const keep = alg === undefined ? active : undefined;
    const next = alg ?? keep ?? DEFAULT_SIGNING_ALGORITHM;
    const key = await createSigningKey(ctx.encryption, next);
    const outcome = await ctx.signingKeys.rotate(
      tenant,
      key,
      keep === undefined ? {} : { activeAlg: keep },
    );
    if (outcome === undefined) throw new TenantNotFound();
    if (outcome.rotated) return { tenant, kid: key.kid, alg: next, retired: outcome.retired };
    if (attempt >= MAX_ROTATION_ATTEMPTS)
      throw new Error(`the signing algorithm of realm ${tenant} kept changing during the rotation`);
  }
}

/** The algorithm of the realm's active key; undefined for a realm without one (rotation gives it one); TenantNotFound for no realm. */
async function currentAlgorithm(
  ctx: Pick<IdentityContext, 'signingKeys' | 'realms'>,
  tenant: string,
): Promise<SigningAlgorithm | undefined> {
  const active = await ctx.signingKeys.findActive(tenant);
  if (active !== undefined) return algorithmOf(active.public_jwk);
  if ((await ctx.realms.find(tenant)) === undefined) throw new TenantNotFound();
  return undefined;
}
