/**
 * Security Event Tokens (RFC 8417) as SSF 1.0 §4 and the CAEP interoperability profile shape
 * them: `typ: secevent+jwt`, signed with the realm's active signing key (the key its access
 * tokens carry, published at the realm's JWKS), one event per SET, the subject in `sub_id`: the
 * service account as `iss_sub` (the realm's issuer and the `sub` of its access tokens), the
 * stream itself as `opaque` for a verification event. A SET is signed when it is delivered,
 * with the key active then; its `jti` and `iat` are the event's, fixed when it was queued, so a
 * redelivery is the same event (the receiver deduplicates by `jti`).
 *
 * Not the people audit trail (people/people-audit.ts), whose entries the internal API also
 * calls security events (`RealmSecurityEvent`): those stay inside the platform.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import type { QueuedEventRow } from './signal-stream-repository.js';
import type { IdentityContext } from '../platform/index.js';
import { issuerOf } from '../realms/index.js';
import { decryptSigningKey } from '../signing-keys/index.js';

/** How long a realm's key is used before it is read again (a rotation reaches SETs that late; the retired key stays published longer). */
const KEY_TTL_MS = 30_000;
/** Realms whose key is held at once; beyond it the oldest is forgotten (bound: the realms with streams). */
const MAX_KEYS = 1000;

interface HeldKey {
  kid: string;
  alg: string;
  key: KeyObject;
  readAt: number;
}

export class SecurityEventTokenSigner {
  readonly #keys = new Map<string, HeldKey>();

  constructor(
    private readonly identity: Pick<IdentityContext, 'signingKeys' | 'encryption'>,
    private readonly authUrl: string,
    /** Tests make it small. */
    private readonly maxKeys = MAX_KEYS,
  ) {}

  /** Realm keys held now (at most `maxKeys`). */
  get size(): number {
    return this.#keys.size;
  }

  async #keyOf(realm: string): Promise<HeldKey> {
    const held = this.#keys.get(realm);
    if (held !== undefined && Date.now() - held.readAt < KEY_TTL_MS) return held;
    const row = await this.identity.signingKeys.findActive(realm);
    if (!row) throw new Error(`realm ${realm} has no active signing key`);
    const jwk = decryptSigningKey(this.identity.encryption, row.kid, row.private_key_encrypted);
    const key: HeldKey = {
      kid: row.kid,
      alg: String(jwk.alg),
      key: createPrivateKey({ key: jwk as never, format: 'jwk' }),
      readAt: Date.now(),
    };
    this.#keys.delete(realm);
    if (this.#keys.size >= this.maxKeys) this.#keys.delete(this.#keys.keys().next().value!);
    this.#keys.set(realm, key);
    return key;
  }

  /** The SET of a queued event for the stream `streamId` of `realm`, addressed to `audience` (the receiver's client_id). */
  async sign(
    realm: string,
    streamId: string,
    audience: string,
    event: QueuedEventRow,
  ): Promise<string> {
    const { kid, alg, key } = await this.#keyOf(realm);
    const iss = issuerOf(this.authUrl, realm);
    const subId =
      event.sub === null
        ? { format: 'opaque', id: streamId }
        : { format: 'iss_sub', iss, sub: event.sub };
    return new SignJWT({ sub_id: subId, events: { [event.event_type]: event.event } })
      .setProtectedHeader({ alg, kid, typ: 'secevent+jwt' })
      .setIssuer(iss)
      .setAudience(audience)
      .setJti(event.jti)
      .setIssuedAt(Math.floor(new Date(event.created_at).getTime() / 1000))
      .sign(key);
  }
}
