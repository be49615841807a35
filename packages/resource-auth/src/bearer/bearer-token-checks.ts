/**
 * The checks of a bearer token itself, steps 1-3 and 5 of bearer-auth.ts: its shape, header,
 * issuer, audience and expiry before any key is looked up (so a token that fails any of them
 * never costs a realm list or a JWKS fetch), then, with the realm's key, its signature and claims.
 * Each failed check throws `InvalidToken` (made by the caller's `invalid`, which names the realm).
 */
import jwt from 'jsonwebtoken';
import {
  isSigningAlgorithm,
  SIGNING_ALGORITHMS,
  type SigningAlgorithm,
} from '../platform/realm-names.js';
import type { InvalidToken } from './bearer-errors.js';
import type { VerificationKey } from './jwks-document.js';
import { principalFromClaims, TENANT_NAME_PATTERN, type Principal } from './principal.js';
import { decodeJsonSegment } from '../jws-segment.js';

/** Longer than any token our issuer mints by far; bounds the cache key and the parse cost. */
const MAX_TOKEN_LENGTH = 8192;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt']);
const ALGORITHM_RULE = `Token algorithm must be ${SIGNING_ALGORITHMS.join(' or ')}`;

export interface BearerTokenChecksOptions {
  /** Public base URL of the token service, without a trailing slash. */
  authUrl: string;
  /** The audiences accepted: a token must name one of them. */
  audience: string | readonly string[];
  /** Allowed clock skew for `exp`/`nbf`/`iat`, in seconds. */
  toleranceSec: number;
  /** The error of a failed check (logs the reason). */
  invalid(message: string): InvalidToken;
}

export class BearerTokenChecks {
  readonly #audiences: readonly string[];
  /** jsonwebtoken's form of the same audiences (built once: it is read per verification). */
  readonly #jwtAudiences: [string, ...string[]];

  constructor(private readonly options: BearerTokenChecksOptions) {
    this.#audiences = typeof options.audience === 'string' ? [options.audience] : options.audience;
    if (this.#audiences.length === 0)
      throw new Error('BearerTokenChecks needs at least one audience');
    this.#jwtAudiences = [this.#audiences[0]!, ...this.#audiences.slice(1)];
  }

  /** Steps 1-3: everything that can be decided without keys. Returns the realm and key id to verify with, and the algorithm the header claims. */
  precheck(token: string): { tenant: string; kid: string; alg: SigningAlgorithm } {
    const { authUrl, toleranceSec, invalid } = this.options;
    if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token))
      throw invalid('Token is not a well-formed JWT');
    const [headerPart = '', payloadPart = ''] = token.split('.');
    const header = decodeJsonSegment(headerPart);
    const payload = decodeJsonSegment(payloadPart);
    if (header === undefined || payload === undefined)
      throw invalid('Token is not a well-formed JWT');
    const { alg } = header;
    if (!isSigningAlgorithm(alg)) throw invalid(ALGORITHM_RULE);
    if (typeof header.typ !== 'string' || !ACCESS_TOKEN_TYPES.has(header.typ.toLowerCase()))
      throw invalid('Token type must be at+jwt');
    if (header.crit !== undefined)
      throw invalid('Token has unsupported critical header parameters');
    const { kid } = header;
    if (typeof kid !== 'string' || kid === '' || kid.length > 255)
      throw invalid('Token has no valid key id');
    const { tenant, iss, aud, exp } = payload;
    if (typeof tenant !== 'string' || !TENANT_NAME_PATTERN.test(tenant))
      throw invalid('Token tenant claim is missing or invalid');
    if (iss !== `${authUrl}/realms/${tenant}`) throw invalid('Token issuer is not accepted');
    // The same rule as jsonwebtoken's (one of the token's audiences is one of ours), checked again with the signature.
    if (!this.#accepts(aud)) throw invalid('Token audience is not accepted');
    if (typeof exp !== 'number' || !Number.isFinite(exp))
      throw invalid('Token exp claim is missing or invalid');
    if (Date.now() / 1000 >= exp + toleranceSec) throw invalid('Token has expired');
    return { tenant, kid, alg };
  }

  /**
   * Steps 4 (the signature, with the realm's key) and 5 (the claims): the frozen principal.
   * The key's own algorithm decides (jwks-document.ts): a header naming another is refused
   * before any signature check, and the check itself admits only the key's.
   */
  verify(
    token: string,
    tenant: string,
    headerAlg: SigningAlgorithm,
    key: VerificationKey,
  ): Principal {
    const { authUrl, toleranceSec, invalid } = this.options;
    if (headerAlg !== key.alg) throw invalid('Token algorithm does not match its signing key');
    let claims: Record<string, unknown>;
    try {
      claims = jwt.verify(token, key.key, {
        algorithms: [key.alg],
        audience: this.#jwtAudiences,
        issuer: `${authUrl}/realms/${tenant}`,
        clockTolerance: toleranceSec,
      }) as Record<string, unknown>;
    } catch (err) {
      throw invalid(describeJwtError(err));
    }
    const nowSec = Date.now() / 1000;
    if (
      typeof claims.iat !== 'number' ||
      !Number.isFinite(claims.iat) ||
      claims.iat > nowSec + toleranceSec
    ) {
      throw invalid('Token iat claim is missing or in the future');
    }
    const principal = principalFromClaims(tenant, claims);
    if (typeof principal === 'string') throw invalid(principal);
    return deepFreeze(principal);
  }

  #accepts(aud: unknown): boolean {
    const audiences = this.#audiences;
    if (typeof aud === 'string') return audiences.includes(aud);
    return Array.isArray(aud) && aud.some((one) => audiences.includes(one as string));
  }
}

function deepFreeze(principal: Principal): Principal {
  for (const grant of principal.grants) Object.freeze(grant);
  Object.freeze(principal.grants);
  if (principal.actors !== undefined) Object.freeze(principal.actors);
  return Object.freeze(principal);
}

function describeJwtError(err: unknown): string {
  if (err instanceof jwt.TokenExpiredError) return 'Token has expired';
  if (err instanceof jwt.NotBeforeError) return 'Token is not yet valid';
  const message = (err as Error)?.message ?? '';
  if (message.startsWith('jwt audience invalid')) return 'Token audience is not accepted';
  if (message.startsWith('jwt issuer invalid')) return 'Token issuer is not accepted';
  if (message === 'invalid signature') return 'Token signature is invalid';
  return 'Token is invalid';
}
