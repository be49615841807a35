/**
 * The RFC 6750 §3 answers of a resource server, as `AppError`s: the shared error
 * middleware writes the `Error` body and the `WWW-Authenticate` header.
 */
import { AppError, ServiceUnavailable } from '../platform/errors.js';

// RFC 6750 §3: auth-param values are quoted strings limited to %x20-21 / %x23-5B / %x5D-7E.
export function authParam(value: string): string {
  return value.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '').slice(0, 200);
}

/** `Bearer realm="..."` plus the optional error attributes. */
export function bearerChallenge(realm: string, error?: string, description?: string): string {
  let challenge = `Bearer realm="${authParam(realm)}"`;
  if (error !== undefined) challenge += `, error="${error}"`;
  if (description !== undefined) challenge += `, error_description="${authParam(description)}"`;
  return challenge;
}

/** No credentials at all: 401 with a bare challenge (no `error` attribute, RFC 6750 §3.1). */
export class MissingToken extends AppError {
  constructor(realm: string) {
    super(401, 'Authentication required: send Authorization: Bearer <access token>', {
      headers: { 'www-authenticate': bearerChallenge(realm) },
    });
    this.name = 'MissingToken';
  }
}

/** A token that is malformed, expired, revoked, or fails a check: 401 `invalid_token`. */
export class InvalidToken extends AppError {
  constructor(realm: string, message: string) {
    super(401, message, {
      headers: { 'www-authenticate': bearerChallenge(realm, 'invalid_token', message) },
    });
    this.name = 'InvalidToken';
  }
}

/** A valid token without the needed role or grant: 403 `insufficient_scope`. */
export class InsufficientScope extends AppError {
  constructor(realm: string, message: string) {
    super(403, message, {
      headers: { 'www-authenticate': bearerChallenge(realm, 'insufficient_scope', message) },
    });
    this.name = 'InsufficientScope';
  }
}

/** Keys or revocation state cannot be obtained right now: fail closed, and let the client retry. */
export class AuthUnavailable extends ServiceUnavailable {
  constructor(message = 'Token verification is temporarily unavailable') {
    super(message, { headers: { 'retry-after': '1' }, expose: true });
  }
}
