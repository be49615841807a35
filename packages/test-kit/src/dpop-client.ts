/**
 * The client side of DPoP (RFC 9449) for tests and benchmarks: a key pair and the proofs it
 * signs, any claim or header overridable (the hostile tests forge them). Written apart from the
 * resource server's checks on purpose: the thumbprint here is RFC 7638 from its text, so a
 * mistake on either side shows.
 */
import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { signJws } from './jwt-signing.js';

export type DpopAlg = 'ES256' | 'EdDSA';

export interface ProofOptions {
  /** The request's method and URL (query and fragment are ignored by the server). */
  htm: string;
  htu: string;
  /** The access token sent with the proof: its hash becomes `ath`. */
  token?: string;
  nonce?: string;
  /** Default: a fresh UUID. */
  jti?: string;
  /** Seconds since the epoch (default: now). */
  iat?: number;
  /** Claims merged over the defaults; `undefined` removes one. */
  claims?: Record<string, unknown>;
  /** Header parameters merged over `{typ: 'dpop+jwt', alg, jwk}`; `undefined` removes one. */
  header?: Record<string, unknown>;
}

export interface DpopKey {
  alg: DpopAlg;
  /** The public JWK a proof carries. */
  jwk: Record<string, string>;
  /** RFC 7638 SHA-256 thumbprint: a bound token's `cnf.jkt`. */
  thumbprint: string;
  privateKey: KeyObject;
  proof(options: ProofOptions): string;
}

const _segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** RFC 7638: the required members, in lexicographic order, no whitespace. */
export function jwkThumbprint(jwk: Record<string, string>): string {
  const members =
    jwk.kty === 'EC'
      ? ['crv', 'kty', 'x', 'y']
      : jwk.kty === 'OKP'
        ? ['crv', 'kty', 'x']
        : ['e', 'kty', 'n'];
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

/** Signs `header.payload` as a compact JWS with `key` (raw r||s for ES256). */
function withoutUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

/** A fresh key pair (ES256 on P-256 by default, or Ed25519) and its proofs. */
export function dpopKey(alg: DpopAlg = 'ES256'): DpopKey {
  const { publicKey, privateKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('ed25519');
  const exported = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const jwk: Record<string, string> =
    alg === 'ES256'
      ? { kty: 'EC', crv: 'P-256', x: exported.x!, y: exported.y! }
      : { kty: 'OKP', crv: 'Ed25519', x: exported.x! };
  return {
    alg,
    jwk,
    thumbprint: jwkThumbprint(jwk),
    privateKey,
    proof({ htm, htu, token, nonce, jti, iat, claims = {}, header = {} }) {
      const payload = withoutUndefined({
        jti: jti ?? randomUUID(),
        htm,
        htu,
        iat: iat ?? Math.floor(Date.now() / 1000),
        ...(token === undefined
          ? {}
          : { ath: createHash('sha256').update(token).digest('base64url') }),
        ...(nonce === undefined ? {} : { nonce }),
        ...claims,
      });
      return signJws(
        withoutUndefined({ typ: 'dpop+jwt', alg, jwk, ...header }),
        payload,
        privateKey,
        alg,
      );
    },
  };
}
