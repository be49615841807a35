/**
 * The public key a DPoP proof carries in its header (`jwk`), RFC 9449 §4.2: read without any
 * cryptography first (its type, curve and coordinates must fit the proof's `alg`, and it must
 * not be a private key), so a proof with a bad key costs a few string checks; then its RFC 7638
 * thumbprint, which is what an access token's `cnf.jkt` names.
 *
 * Only ES256 (P-256) and EdDSA/Ed25519 keys are accepted: the algorithms oidc-provider offers
 * for DPoP by default, with keys of fixed, small size (an RSA key of any size would let a proof
 * make us parse a huge modulus).
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { verificationKeyProblem } from '../platform/verification-key-rules.js';

/** The proof algorithms accepted, as discovery advertises them (`dpop_signing_alg_values_supported`). */
export const DPOP_SIGNING_ALGS = ['ES256', 'EdDSA', 'Ed25519'] as const;
export type DpopSigningAlg = (typeof DPOP_SIGNING_ALGS)[number];

/** A 32-byte coordinate in base64url, unpadded. */
const COORDINATE = /^[A-Za-z0-9_-]{43}$/;

/** The members of the key that its thumbprint covers, in RFC 7638's order (lexicographic). */
export interface ProofKey {
  alg: DpopSigningAlg;
  /** `{"crv":..,"kty":..,"x":..[,"y":..]}`: the thumbprint's input, and the cache key of the imported key. */
  canonical: string;
  thumbprint: string;
  jwk: { kty: string; crv: string; x: string; y?: string };
}

export function isDpopSigningAlg(alg: unknown): alg is DpopSigningAlg {
  return typeof alg === 'string' && (DPOP_SIGNING_ALGS as readonly string[]).includes(alg);
}

/**
 * The proof's key, or the reason it cannot be one. `alg` is the proof's (already one of
 * DPOP_SIGNING_ALGS); the key must be of the matching type and curve.
 */
export function readProofKey(jwk: unknown, alg: DpopSigningAlg): ProofKey | string {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk))
    return 'DPoP proof jwk must be a JSON object';
  const key = jwk as Record<string, unknown>;
  // A private key in a header is a client bug that leaks the key: never accept it.
  for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) {
    if (member in key) return 'DPoP proof jwk must be a public key';
  }
  const { kty, crv, x, y } = key;
  if (alg === 'ES256') {
    if (kty !== 'EC' || crv !== 'P-256') return 'DPoP proof jwk must be an EC P-256 key for ES256';
    if (
      typeof x !== 'string' ||
      typeof y !== 'string' ||
      !COORDINATE.test(x) ||
      !COORDINATE.test(y)
    )
      return 'DPoP proof jwk has invalid coordinates';
    return withThumbprint(alg, { crv, kty, x, y });
  }
  if (kty !== 'OKP' || crv !== 'Ed25519')
    return 'DPoP proof jwk must be an OKP Ed25519 key for EdDSA';
  if (typeof x !== 'string' || !COORDINATE.test(x) || y !== undefined)
    return 'DPoP proof jwk has invalid coordinates';
  return withThumbprint(alg, { crv, kty, x });
}

function withThumbprint(alg: DpopSigningAlg, jwk: ProofKey['jwk']): ProofKey {
  // RFC 7638 §3: the required members only, sorted, no whitespace. The values are checked above
  // to hold nothing JSON would escape, so this string is exactly the canonical form.
  const canonical =
    jwk.y === undefined
      ? `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}"}`
      : `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`;
  return {
    alg,
    canonical,
    thumbprint: createHash('sha256').update(canonical).digest('base64url'),
    jwk,
  };
}

/** A proof key ready to verify with. */
export interface KnownProofKey {
  key: ProofKey;
  object: KeyObject;
}

/**
 * The key as node:crypto takes it, or undefined when its coordinates are not a point of the
 * curve. `readProofKey` admits only keys the shared key rule accepts (P-256, Ed25519); the rule
 * is asked again here so that admitting another algorithm later cannot let an anonymous client's
 * proof bring a key that is costly to check.
 */
export function importProofKey(key: ProofKey): KeyObject | undefined {
  try {
    const object = createPublicKey({ key: key.jwk, format: 'jwk' });
    return verificationKeyProblem(object) === undefined ? object : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Proof headers (`{typ, alg, jwk}`, the same in every proof of a client) that verified before,
 * with their key read and imported: a client's next proof skips decoding its header, the
 * thumbprint and the import. Only a proof that passed every check is remembered, so the entries
 * are the keys of clients holding valid DPoP tokens: live data, least recently used dropped first
 * beyond `maxEntries` (default 10,000).
 */
export class ProofKeyCache {
  readonly #byHeader = new Map<string, KnownProofKey>();

  constructor(private readonly maxEntries = 10_000) {}

  known(headerSegment: string): KnownProofKey | undefined {
    const entry = this.#byHeader.get(headerSegment);
    if (entry !== undefined) {
      this.#byHeader.delete(headerSegment);
      this.#byHeader.set(headerSegment, entry);
    }
    return entry;
  }

  remember(headerSegment: string, entry: KnownProofKey): void {
    this.#byHeader.delete(headerSegment);
    this.#byHeader.set(headerSegment, entry);
    if (this.#byHeader.size > this.maxEntries)
      this.#byHeader.delete(this.#byHeader.keys().next().value!);
  }

  get size(): number {
    return this.#byHeader.size;
  }

  clear(): void {
    this.#byHeader.clear();
  }
}
