/**
 * The credentials of a request's `Authorization` header: `Bearer <token>` (RFC 6750), or
 * `DPoP <token>` (RFC 9449 §7.1) where the resource server checks DPoP proofs. No header, or
 * a scheme this server does not take (Basic, DPoP where proofs are not checked), is a challenge
 * without an error; a header of a known scheme with no well-formed token is `invalid_token`.
 */
import type { IncomingMessage } from 'node:http';
import { DpopInvalidToken } from '../dpop/dpop-errors.js';
import { MissingToken, type InvalidToken } from './bearer-errors.js';

export interface RequestCredentials {
  scheme: 'bearer' | 'dpop';
  token: string;
}

const BEARER = /^bearer$/i;
const DPOP = /^dpop$/i;
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export function credentialsOf(
  req: IncomingMessage,
  realm: string,
  invalid: (message: string) => InvalidToken,
  takesDpop: boolean,
): RequestCredentials {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') throw new MissingToken(realm);
  const [scheme = '', ...rest] = header.trim().split(/ +/);
  const token = rest.length === 1 ? rest[0]! : '';
  if (BEARER.test(scheme)) {
    if (!B64TOKEN.test(token))
      throw invalid('Authorization header must be Bearer followed by a token');
    return { scheme: 'bearer', token };
  }
  if (takesDpop && DPOP.test(scheme)) {
    if (!B64TOKEN.test(token))
      throw new DpopInvalidToken(realm, 'Authorization header must be DPoP followed by a token');
    return { scheme: 'dpop', token };
  }
  // Another scheme (Basic, ...) carries no credentials we take: challenge without an error.
  throw new MissingToken(realm);
}
