import { constants, verify, type KeyObject } from 'node:crypto';

/**
 * Compact JWS as client assertions carry them (RFC 7515 §7.1): parsed with bounds, checked
 * with node:crypto. Only asymmetric algorithms exist here: `none` and HS* (a shared secret,
 * or a public key mistaken for one) can never verify.
 */
export interface CompactJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

/** Larger than any platform token seen in practice (Kubernetes, CI providers: 1-2 KiB), far below oidc-provider's body limit. */
export const MAX_JWS_LENGTH = 16_384;

const RSA_ALGS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']);
const EC_ALGS: Record<string, string> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
};
const ED_ALGS = new Set(['EdDSA', 'Ed25519']);
export const ASYMMETRIC_ALGS: readonly string[] = [
  ...RSA_ALGS,
  ...Object.values(EC_ALGS),
  ...ED_ALGS,
];

const B64URL = /^[A-Za-z0-9_-]*$/;

function jsonObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The three parts, or undefined for anything that is not a compact JWS of JSON objects within the bound. */
export function parseCompactJws(token: string): CompactJws | undefined {
  if (token.length > MAX_JWS_LENGTH) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) return undefined;
  const [h, p, s] = parts as [string, string, string];
  const header = jsonObject(h);
  const payload = jsonObject(p);
  if (header === undefined || payload === undefined || s.length === 0) return undefined;
  return { header, payload, signingInput: `${h}.${p}`, signature: Buffer.from(s, 'base64url') };
}

/** Whether `alg` is one this key may sign with: RSA any RS/PS, EC its curve's ES, Ed25519 EdDSA (or its RFC 9864 name). */
export function algFits(alg: unknown, key: KeyObject): boolean {
  if (typeof alg !== 'string') return false;
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return RSA_ALGS.has(alg);
    case 'ec':
      return EC_ALGS[key.asymmetricKeyDetails?.namedCurve ?? ''] === alg;
    case 'ed25519':
      return ED_ALGS.has(alg);
    default:
      return false;
  }
}

/** RSA keys whose check costs less than handing it to the pool: 2048 bits with e = 65537, the usual key. */
function isCheapRsa(key: KeyObject): boolean {
  const details = key.asymmetricKeyDetails;
  return (
    (details?.modulusLength ?? Infinity) <= 2048 && (details?.publicExponent ?? Infinity) <= 65537n
  );
}

/**
 * The signature check itself. An Ed25519 or P-256 check costs 45-80 µs of CPU, most of a
 * grant's JavaScript time, so it runs on libuv's thread pool (as the token's own RS256
 * signature is made); so does an RSA check with a longer modulus or exponent (RSA-4096 with
 * e = 2^32 - 1, the costliest key the key rule admits, costs several times an RSA-2048 one:
 * docs/hardening.md, "Bounded verification cost"). An RSA-2048 check with e = 65537 costs
 * about 20 µs, less than handing it to the pool, so it runs here. False for a key that does not fit `alg`; never rejects.
 */
export function verifyJws(jws: CompactJws, alg: string, key: KeyObject): Promise<boolean> {
  if (!algFits(alg, key)) return Promise.resolve(false);
  const data = Buffer.from(jws.signingInput);
  const digest = alg === 'EdDSA' || alg === 'Ed25519' ? null : `sha${alg.slice(2)}`;
  const options = alg.startsWith('PS')
    ? {
        key,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
      }
    : alg.startsWith('ES')
      ? { key, dsaEncoding: 'ieee-p1363' as const }
      : key;
  if (key.asymmetricKeyType === 'rsa' && isCheapRsa(key)) {
    try {
      return Promise.resolve(verify(digest, data, options, jws.signature));
    } catch {
      return Promise.resolve(false);
    }
  }
  return new Promise((resolve) => {
    try {
      verify(digest, data, options, jws.signature, (err, valid) => resolve(err === null && valid));
    } catch {
      resolve(false);
    }
  });
}

/**
 * Signature checks one assertion may cost, at most. A `kid` names one key; an assertion without
 * one could otherwise make us try every key of the account or of the issuer, so an attacker who
 * knows a client_id would pay one request for several checks. With the key rule
 * (`verificationKeyProblem`) the worst case per assertion is this many RSA-4096 checks.
 */
export const MAX_SIGNATURE_CHECKS = 3;

/**
 * The first of `keys` whose signature check passes, and how many checks were made. Keys that do
 * not fit `alg`, and keys `keyOf` has no object for (refused by the key rule), are passed over
 * without a check; after `MAX_SIGNATURE_CHECKS` failed checks the rest are not tried. Checked
 * one after another: a kid usually names one key.
 */
export async function firstVerifying<K>(
  jws: CompactJws,
  alg: string,
  keys: readonly K[],
  keyOf: (k: K) => KeyObject | undefined,
): Promise<{ key: K | undefined; checks: number }> {
  let checks = 0;
  for (const candidate of keys) {
    const key = keyOf(candidate);
    if (key === undefined || !algFits(alg, key)) continue;
    checks += 1;
    if (await verifyJws(jws, alg, key)) return { key: candidate, checks };
    if (checks === MAX_SIGNATURE_CHECKS) break;
  }
  return { key: undefined, checks };
}
