/**
 * Compact JWS signing for tests and benches, with node:crypto only (what a client library
 * does, written out so a test can also sign what no library would: a wrong `aud`, an `exp` an
 * hour ahead, a replayed `jti`). RS*, PS*, ES* and EdDSA.
 */
import { constants, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';

export const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Claims or header merged over the defaults; a value of `undefined` removes one. */
export function withOverrides(
  base: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base, ...overrides };
  for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
  return merged;
}

/**
 * `<signingInput>.<signature>`, signed with `privateKey` as `alg` prescribes. ECDSA signatures
 * are the raw r||s pair JOSE wants (RFC 7518 §3.4), or with `der` the ASN.1 DER form JOSE
 * refuses (hostile tests).
 */
export function signInput(
  signingInput: string,
  privateKey: KeyObject,
  alg: string,
  { der = false } = {},
): string {
  const data = Buffer.from(signingInput);
  const digest = alg === 'EdDSA' || alg === 'Ed25519' ? null : `sha${alg.slice(2)}`;
  const signature = alg.startsWith('PS')
    ? sign(digest, data, {
        key: privateKey,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
      })
    : alg.startsWith('ES')
      ? sign(digest, data, { key: privateKey, dsaEncoding: der ? 'der' : 'ieee-p1363' })
      : sign(digest, data, privateKey);
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** A compact JWS of `header` and `payload`, signed with `privateKey` as `header.alg` says (`signAs`: the key's algorithm when a test forges the header's). */
export function signJws(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  privateKey: KeyObject,
  signAs: string = String(header.alg),
): string {
  return signInput(`${b64url(header)}.${b64url(payload)}`, privateKey, signAs);
}

export type ClientKeyType = 'rsa' | 'ec' | 'ed25519';

/** A key pair a service account's automation would hold: its private key, and the public half as a JWK and a PEM. */
export interface ClientKeyPair {
  type: ClientKeyType;
  alg: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: Record<string, unknown>;
  publicPem: string;
}

const ALG_OF: Record<ClientKeyType, string> = { rsa: 'RS256', ec: 'ES256', ed25519: 'EdDSA' };

export function clientKeyPair(type: ClientKeyType = 'ec', rsaBits = 2048): ClientKeyPair {
  const { privateKey, publicKey } =
    type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: rsaBits })
      : type === 'ec'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('ed25519');
  return {
    type,
    alg: ALG_OF[type],
    privateKey,
    publicKey,
    publicJwk: publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

export interface ClientAssertionOptions {
  clientId: string;
  /** The realm's issuer or token endpoint. */
  audience: string | string[];
  key: ClientKeyPair;
  /** The key's id at the token service (its `kid`, or the RFC 7638 thumbprint); omitted when undefined. */
  kid?: string | undefined;
  /** Over `{iss, sub, aud, jti, iat, exp: now + 60}`; `undefined` removes a claim. */
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
}

/** An RFC 7523 `private_key_jwt` client assertion, fresh `jti` each time. */
export function clientAssertion({
  clientId,
  audience,
  key,
  kid,
  claims,
  header,
}: ClientAssertionOptions): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = withOverrides(
    { iss: clientId, sub: clientId, aud: audience, jti: randomUUID(), iat: now, exp: now + 60 },
    claims,
  );
  return signJws(
    withOverrides({ alg: key.alg, typ: 'JWT', ...(kid === undefined ? {} : { kid }) }, header),
    payload,
    key.privateKey,
  );
}

/** The form of a client credentials grant authenticated by a client assertion (what openid-client sends). */
export function assertionGrantBody(
  clientId: string,
  assertion: string,
  extra: Record<string, string> = {},
): string {
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: assertion,
    ...extra,
  }).toString();
}
