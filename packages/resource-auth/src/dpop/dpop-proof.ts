/**
 * A DPoP proof (RFC 9449 §4) as a resource server checks it, in the order of cost: its shape,
 * header and key are read without cryptography (`parseProof`), then its claims are held against
 * the request (`checkProofClaims`: `htm`, `htu`, `iat`, `ath`), and only then, elsewhere, the key
 * binding, the signature and the `jti`. Each failure is a reason string, which the caller turns
 * into a 401 `invalid_dpop_proof`.
 */
import { createHash } from 'node:crypto';
import { isDpopSigningAlg, readProofKey, type KnownProofKey, type ProofKey } from './dpop-jwk.js';
import { decodeJsonSegment } from '../jws-segment.js';

/**
 * Far above any proof of an accepted key (an ES256 proof with a nonce is ≈ 600 characters);
 * bounds what a request makes us decode.
 */
export const MAX_PROOF_LENGTH = 4096;
const MAX_JTI_LENGTH = 256;
const MAX_NONCE_LENGTH = 256;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface ParsedProof {
  key: ProofKey;
  /** The header segment as sent (the cache key of a client's known key). */
  headerSegment: string;
  /** The key already imported, when this header verified before. */
  known: KnownProofKey | undefined;
  /** A header not known before, once its signature verified: remembered when the proof's jti is claimed. */
  verifiedKey?: KnownProofKey;
  /** `<header>.<payload>` as sent: what the signature covers. */
  signingInput: string;
  signature: Buffer;
  jti: string;
  htm: string;
  htu: string;
  iat: number;
  ath: string | undefined;
  nonce: string | undefined;
}

/** What the request says, for the claims to match. */
export interface ProofRequest {
  method: string;
  /** The URL the client called: this server's public URL plus the request's path, without query or fragment. */
  url: string;
  /** The hash of the access token sent with the proof (`accessTokenHash`). */
  ath: string;
  nowSec: number;
  /** How far `iat` may be from now, either way, in seconds. */
  iatWindowSec: number;
}

const optionalText = (value: unknown, max: number): value is string | undefined =>
  value === undefined || (typeof value === 'string' && value.length > 0 && value.length <= max);

/**
 * The proof from the `DPoP` header value, or why it is not one (no cryptography here).
 * `knownHeader` answers a header that verified before (its key read already).
 */
export function parseProof(
  value: string | string[] | undefined,
  knownHeader: (segment: string) => KnownProofKey | undefined = () => undefined,
): ParsedProof | string {
  if (value === undefined || value === '')
    return 'A DPoP proof is required: send it in the DPoP header';
  // Two DPoP headers arrive joined (", "), which no compact JWS contains.
  if (Array.isArray(value) || value.length > MAX_PROOF_LENGTH || !COMPACT_JWS.test(value))
    return 'DPoP proof must be one compact JWS of at most 4096 characters';
  const [headerPart = '', payloadPart = '', signaturePart = ''] = value.split('.');
  const known = knownHeader(headerPart);
  const key = known?.key ?? readHeader(headerPart);
  if (typeof key === 'string') return key;
  const payload = decodeJsonSegment(payloadPart);
  if (payload === undefined) return 'DPoP proof is not a well-formed JWT';
  const { jti, htm, htu, iat, ath, nonce } = payload;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH)
    return 'DPoP proof jti must be a string of 1 to 256 characters';
  if (typeof htm !== 'string' || typeof htu !== 'string')
    return 'DPoP proof htm and htu must be strings';
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return 'DPoP proof iat must be a number';
  if (!optionalText(ath, 128)) return 'DPoP proof ath must be a string';
  if (!optionalText(nonce, MAX_NONCE_LENGTH)) return 'DPoP proof nonce must be a string';
  return {
    key,
    headerSegment: headerPart,
    known,
    signingInput: `${headerPart}.${payloadPart}`,
    signature: Buffer.from(signaturePart, 'base64url'),
    jti,
    htm,
    htu,
    iat,
    ath,
    nonce,
  };
}

/** The key of a header not seen before: its `typ`, `alg` and `jwk` read, or why they fail. */
function readHeader(segment: string): ProofKey | string {
  const header = decodeJsonSegment(segment);
  if (header === undefined) return 'DPoP proof is not a well-formed JWT';
  if (typeof header.typ !== 'string' || header.typ.toLowerCase() !== 'dpop+jwt')
    return 'DPoP proof typ must be dpop+jwt';
  if (!isDpopSigningAlg(header.alg)) return 'DPoP proof alg must be ES256 or EdDSA';
  if (header.crit !== undefined) return 'DPoP proof has unsupported critical header parameters';
  return readProofKey(header.jwk, header.alg);
}

/** `htu` without query and fragment, normalised as a URL (scheme and host case, default port, dot segments). */
export function normalisedHtu(htu: string): string | undefined {
  const url = URL.parse(htu);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) return undefined;
  url.search = '';
  url.hash = '';
  return url.href;
}

/**
 * Whether `htu` names `url` (this server's public URL and the request's path): the same string
 * up to a query or fragment (what clients send; no URL parsing), else the same once both are
 * normalised.
 */
function sameUrl(htu: string, url: string): boolean {
  if (
    htu.startsWith(url) &&
    (htu.length === url.length || htu[url.length] === '?' || htu[url.length] === '#')
  )
    return true;
  const normalised = normalisedHtu(htu);
  return normalised !== undefined && normalised === normalisedHtu(url);
}

/** The hash of an access token that a proof sent with it carries as `ath`. */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** `htm`, `htu`, `iat` and `ath` against the request: undefined when they match, else the reason. */
export function checkProofClaims(proof: ParsedProof, request: ProofRequest): string | undefined {
  if (proof.htm !== request.method) return 'DPoP proof htm does not match the request method';
  if (!sameUrl(proof.htu, request.url)) return 'DPoP proof htu does not match the request URL';
  if (Math.abs(request.nowSec - proof.iat) > request.iatWindowSec)
    return 'DPoP proof iat is not recent enough';
  if (proof.ath === undefined) return 'DPoP proof ath is required with an access token';
  if (proof.ath !== request.ath) return 'DPoP proof ath does not match the access token';
  return undefined;
}
