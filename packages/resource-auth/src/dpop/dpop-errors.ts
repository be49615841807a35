/**
 * The answers of RFC 9449 §7.1 and §9 as `AppError`s: 401 with a `DPoP` challenge (its `algs`
 * tell the client which proof algorithms are accepted) and the `Error` body. `invalid_token`
 * when the access token cannot be used this way (a DPoP-bound token sent as a bearer token, a
 * proof key the token is not bound to), `invalid_dpop_proof` when the proof itself fails,
 * `use_dpop_nonce` with a fresh nonce in `DPoP-Nonce` when a nonce is required.
 */
import { AppError } from '../platform/errors.js';
import { authParam } from '../bearer/bearer-errors.js';
import { DPOP_SIGNING_ALGS } from './dpop-jwk.js';

const ALGS = DPOP_SIGNING_ALGS.join(' ');

/** `DPoP realm="...", error="...", error_description="...", algs="ES256 EdDSA Ed25519"`. */
export function dpopChallenge(realm: string, error: string, description: string): string {
  return `DPoP realm="${authParam(realm)}", error="${error}", error_description="${authParam(description)}", algs="${ALGS}"`;
}

/** The access token may not be used as sent: 401 `invalid_token` under the DPoP scheme. */
export class DpopInvalidToken extends AppError {
  constructor(realm: string, message: string) {
    super(401, message, {
      headers: { 'www-authenticate': dpopChallenge(realm, 'invalid_token', message) },
    });
    this.name = 'DpopInvalidToken';
  }
}

/** The proof is missing, malformed, for another request, stale, replayed or badly signed: 401 `invalid_dpop_proof`. */
export class InvalidDpopProof extends AppError {
  constructor(realm: string, message: string) {
    super(401, message, {
      headers: { 'www-authenticate': dpopChallenge(realm, 'invalid_dpop_proof', message) },
    });
    this.name = 'InvalidDpopProof';
  }
}

/** The proof lacks a current nonce: 401 `use_dpop_nonce`, the nonce to use in `DPoP-Nonce`. */
export class UseDpopNonce extends AppError {
  constructor(realm: string, nonce: string) {
    const message =
      'Resource server requires a nonce in the DPoP proof: use the one in the DPoP-Nonce header';
    super(401, message, {
      headers: {
        'www-authenticate': dpopChallenge(realm, 'use_dpop_nonce', message),
        'dpop-nonce': nonce,
      },
    });
    this.name = 'UseDpopNonce';
  }
}
