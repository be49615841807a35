/**
 * What of an oidc-provider payload may be stored. Rows are keyed by digests of their ids
 * (oidc/oidc-payload-repository.ts), but oidc-provider also writes bearer values into
 * the payloads themselves: every model's `jti` is the row's own id (the `_session` cookie, the
 * interaction id of the `_interaction` cookies and URL, the authorization code, an opaque
 * access token), an Interaction's `returnTo` ends with its id, and its `session.cookie` copies
 * the session's id. `scrubPayload` takes them out before a row is written; `restorePayload`
 * puts back what oidc-provider reads, from the id it looked the row up by.
 *
 * Kept in clear, because none lets anyone act: a session's `uid` and the `sessionUid` /
 * `session.uid` pointing to it (never sent to a browser; `findByUid` must return it), grant ids
 * (no endpoint takes one: revocation takes a token, introspection is off), `sid` (in ID tokens), the
 * client's own `state`, `nonce` and PKCE challenge, and a session's `state.secret` (the
 * sign-out form's CSRF token, useless without the session cookie), and a device code's
 * `userCode` (and the USER_CODE_REF an interaction names it by, oidc-payload-repository.ts):
 * it only lets whoever enters it approve the device as themselves, for the code's ten minutes;
 * the device code, which redeems the tokens, is the row's id and stored as its digest. Pushed
 * authorization requests, whose payloads would carry more, are not enabled.
 */
import { PayloadHoldsItsId } from '../platform/index.js';

type Payload = Record<string, unknown>;

/** Where an Interaction's `returnTo` is kept, without the id it ends with. */
const RETURN_TO_PREFIX = 'returnToPrefix';

export function scrubPayload(model: string, id: string, payload: Payload): Payload {
  const { jti: _jti, ...stored } = payload;
  if (model === 'Interaction') {
    const { returnTo, session } = stored;
    if (typeof returnTo === 'string' && returnTo.endsWith(id)) {
      delete stored.returnTo;
      stored[RETURN_TO_PREFIX] = returnTo.slice(0, -id.length);
    }
    // oidc-provider writes the session's id here and never reads it back.
    if (typeof session === 'object' && session !== null && 'cookie' in session) {
      const { cookie: _cookie, ...rest } = session as Payload;
      stored.session = rest;
    }
  }
  // A field an oidc-provider upgrade adds that echoes the id fails the write, never leaks it.
  if (JSON.stringify(stored).includes(id)) throw new PayloadHoldsItsId(model);
  return stored;
}

/** `id` is undefined when the row was found by another key (a session by uid): then the payload comes back without it. */
export function restorePayload(id: string | undefined, stored: Payload): Payload {
  if (id === undefined) return stored;
  const { [RETURN_TO_PREFIX]: prefix, ...payload } = stored;
  if (typeof prefix === 'string') payload.returnTo = `${prefix}${id}`;
  payload.jti = id;
  return payload;
}
