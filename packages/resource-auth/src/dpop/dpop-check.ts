/**
 * The DPoP step of bearer verification (RFC 9449 §7): a request with `Authorization: DPoP
 * <token>` must carry a `DPoP` proof that this request, made by the holder of the key the token
 * is bound to (`cnf.jkt`), happened once. In order of cost, after the token itself verified:
 * the proof's shape, header and key (read before the token, dpop-proof.ts); `htm`, `htu`, `iat`
 * and `ath`; the key's thumbprint against `cnf.jkt`; the nonce when nonces are on; the signature
 * (all of these `check`); and last the `jti`, claimed in the replay store
 * (`claim`), so only a proof that passed everything else writes anything.
 */
import { verify as verifySignature, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../platform/logger.js';
import { AuthUnavailable } from '../bearer/bearer-errors.js';
import type { Principal } from '../bearer/principal.js';
import { DpopInvalidToken, InvalidDpopProof, UseDpopNonce } from './dpop-errors.js';
import { importProofKey, ProofKeyCache, type DpopSigningAlg } from './dpop-jwk.js';
import { DpopNonces } from './dpop-nonces.js';
import { accessTokenHash, checkProofClaims, parseProof, type ParsedProof } from './dpop-proof.js';
import type { DpopReplayStore } from './dpop-replay-store.js';

export interface DpopOptions {
  /** The base URL clients call this server at ({base_url}, e.g. `PUBLIC_URL`): a proof's `htu` is it plus the request's path. */
  publicUrl: string;
  /** Where proof ids are claimed, shared by every replica (`createRedisReplayStore`). */
  replay: DpopReplayStore;
  /** How far a proof's `iat` may be from now, either way, in seconds (default 60). */
  iatWindowSec?: number;
  /** Keys of server-provided nonces (RFC 9449 §8), the first issuing; absent or empty: no nonce is required. */
  nonceKeys?: readonly string[];
  /** Imported proof keys kept (default 10,000; see `ProofKeyCache`). */
  keyCacheSize?: number;
}

const SIGNATURE_ALGORITHM: Record<DpopSigningAlg, string | null> = {
  ES256: 'sha256',
  EdDSA: null,
  Ed25519: null,
};

function signatureValid(proof: ParsedProof, key: KeyObject): boolean {
  // In place, not on the thread pool: the pool's hand-off (a second thread woken, its
  // completion waking the event loop again) costs more CPU in all than the verification it
  // moves off the loop (docs/performance.md, DPoP: in place and on the pool).
  try {
    return verifySignature(
      SIGNATURE_ALGORITHM[proof.key.alg],
      Buffer.from(proof.signingInput),
      { key, dsaEncoding: 'ieee-p1363' },
      proof.signature,
    );
  } catch {
    return false;
  }
}

/** The path of the request line (absolute-form included), without the query. */
function requestPath(req: IncomingMessage): string {
  const raw = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  if (raw.startsWith('/')) {
    const end = raw.search(/[?#]/);
    return end === -1 ? raw : raw.slice(0, end);
  }
  return URL.parse(raw)?.pathname ?? '/';
}

export class DpopCheck {
  readonly #realm: string;
  readonly #logger: Logger;
  readonly #base: string;
  readonly #replay: DpopReplayStore;
  readonly #windowSec: number;
  readonly #nonces: DpopNonces | undefined;
  readonly #keys: ProofKeyCache;
  /** `ath` of each verified token, computed once: bounded by the verified-token cache, whose principals key it. */
  readonly #athOf = new WeakMap<Principal, string>();

  constructor(options: DpopOptions, { realm, logger }: { realm: string; logger: Logger }) {
    this.#realm = realm;
    this.#logger = logger;
    this.#base = options.publicUrl.replace(/\/+$/, '');
    this.#replay = options.replay;
    this.#windowSec = options.iatWindowSec ?? 60;
    const nonceKeys = (options.nonceKeys ?? []).filter(Boolean);
    this.#nonces = nonceKeys.length > 0 ? new DpopNonces(nonceKeys) : undefined;
    this.#keys = new ProofKeyCache(options.keyCacheSize);
  }

  /** The request's proof, read without cryptography; throws `InvalidDpopProof`. */
  read(req: IncomingMessage): ParsedProof {
    const proof = parseProof(req.headers.dpop, (segment) => this.#keys.known(segment));
    if (typeof proof === 'string') throw this.#invalidProof(proof);
    return proof;
  }

  /**
   * Every check but the `jti`, for a token that verified, the signature included: throws a
   * 401 `AppError`. A proof that passes is then `claim`ed.
   */
  check(
    proof: ParsedProof,
    req: IncomingMessage,
    res: ServerResponse,
    token: string,
    principal: Principal,
  ): void {
    if (principal.jkt === undefined)
      throw this.#invalidToken(
        'The access token is not DPoP-bound: send it with the Bearer scheme',
      );
    const url = this.#base + requestPath(req);
    let ath = this.#athOf.get(principal);
    if (ath === undefined) {
      ath = accessTokenHash(token);
      this.#athOf.set(principal, ath);
    }
    const mismatch = checkProofClaims(proof, {
      method: req.method ?? '',
      url,
      ath,
      nowSec: Date.now() / 1000,
      iatWindowSec: this.#windowSec,
    });
    if (mismatch !== undefined) throw this.#invalidProof(mismatch);
    if (proof.key.thumbprint !== principal.jkt)
      throw this.#invalidToken('The DPoP proof key is not the key the access token is bound to');
    if (this.#nonces !== undefined) {
      const verdict = this.#nonces.check(proof.nonce);
      if (verdict === 'invalid') throw new UseDpopNonce(this.#realm, this.#nonces.current());
      if (verdict === 'previous') res.setHeader('dpop-nonce', this.#nonces.current());
    }
    const key = proof.known?.object ?? importProofKey(proof.key);
    if (key === undefined) throw this.#invalidProof('DPoP proof jwk is not a valid key');
    if (!signatureValid(proof, key)) throw this.#invalidProof('DPoP proof signature is invalid');
    if (proof.known === undefined) proof.verifiedKey = { key: proof.key, object: key };
  }

  /**
   * The proof's `jti`, claimed across replicas, for a proof that passed `check` (so a forged
   * proof never writes): resolves once it is this request's, rejects with 401 when it was
   * used before, 503 when the store cannot answer (fail closed).
   */
  claim(proof: ParsedProof): Promise<void> {
    // The id is claimed for as long as the proof's iat keeps it acceptable.
    const ttlMs = (proof.iat + this.#windowSec + 1) * 1000 - Date.now();
    return this.#replay.claim(`${proof.key.thumbprint}:${proof.jti}`, ttlMs).then(
      (fresh) => {
        if (!fresh) throw this.#invalidProof('DPoP proof has already been used');
        if (proof.verifiedKey !== undefined)
          this.#keys.remember(proof.headerSegment, proof.verifiedKey);
      },
      (err: unknown) => {
        this.#logger.warn(
          { err: { message: (err as Error)?.message } },
          'dpop replay store unavailable',
        );
        throw new AuthUnavailable('DPoP proof replay check is temporarily unavailable');
      },
    );
  }

  /** What a DPoP-bound token sent with the Bearer scheme gets. */
  boundTokenAsBearer(): DpopInvalidToken {
    return this.#invalidToken(
      'The access token is DPoP-bound: send it with the DPoP scheme and a DPoP proof',
    );
  }

  close(): void {
    this.#keys.clear();
  }

  #invalidProof(message: string): InvalidDpopProof {
    this.#logger.debug({ reason: message }, 'dpop proof rejected');
    return new InvalidDpopProof(this.#realm, message);
  }

  #invalidToken(message: string): DpopInvalidToken {
    this.#logger.debug({ reason: message }, 'dpop token rejected');
    return new DpopInvalidToken(this.#realm, message);
  }
}
