// A browser's side of a realm sign-in, for the sign-in benchmarks: cookies, the portal's
// authorization request (code + PKCE), the realm's forms, the code exchange; an authenticator
// app (RFC 6238 with node:crypto) and a software passkey (P-256, attestation `none`, assertions
// signed with node:crypto, CBOR written here), so no dependency is added.
import { createHash, createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { request as httpRequest } from 'node:http';

/** AUTH_URL of the bench platform (bench/lib/platform.mjs): the passkeys' origin and RP ID. */
const ORIGIN = 'http://localhost:8082';
const RP_ID = 'localhost';

const b64u = (/** @type {Buffer} */ buf) => buf.toString('base64url');

/**
 * One HTTP exchange from `localAddress` (sign-ins started are budgeted per source address).
 * @param {string} url
 * @param {{method?: string, headers?: Record<string, string>, body?: string, localAddress?: string}} options
 * @returns {Promise<{status: number, headers: import('node:http').IncomingHttpHeaders, text: string}>}
 */
function fetchRaw(url, { method = 'GET', headers = {}, body, localAddress }) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, headers, ...(localAddress && { localAddress }) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** A browser: a cookie jar (names only: one realm, one host) and a source address. */
export function browser(/** @type {string} */ localAddress) {
  /** @type {Map<string, string>} */
  const jar = new Map();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  /** @param {string} url @param {{method?: string, form?: Record<string, string>}} [options] */
  async function go(url, { method = 'GET', form } = {}) {
    const body = form && new URLSearchParams(form).toString();
    const res = await fetchRaw(url, {
      method,
      localAddress,
      body,
      headers: {
        ...(jar.size > 0 && { cookie: cookieHeader() }),
        ...(body !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
    });
    for (const line of res.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(pair.slice(0, at));
      else jar.set(pair.slice(0, at), value);
    }
    return res;
  }
  return { go };
}

/** RFC 6238: SHA-1, 6 digits, 30 s. */
export function totpCode(/** @type {string} */ base32, now = Date.now()) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of base32) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => Number.parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(now / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

// ---- CBOR, the few types a `none` attestation needs ----------------------------------------
/** @param {number} major @param {number} n */
function head(major, n) {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  const b = Buffer.alloc(3);
  b[0] = (major << 5) | 25;
  b.writeUInt16BE(n, 1);
  return b;
}
/** @param {unknown} value @returns {Buffer} */
function cbor(value) {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string')
    return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (Buffer.isBuffer(value)) return Buffer.concat([head(2, value.length), value]);
  if (value instanceof Map) {
    /** @type {Buffer[]} */
    const parts = [head(5, value.size)];
    for (const [k, v] of value) parts.push(cbor(k), cbor(v));
    return Buffer.concat(parts);
  }
  throw new Error(`cbor: unsupported ${typeof value}`);
}

/** A CBOR map of `entries` (keys in the order given, as COSE and attestation objects list them). */
const cborMap = (/** @type {Array<[number | string, unknown]>} */ entries) => new Map(entries);

/** A software passkey: one P-256 credential for one person, user verification always "done". */
export function softwarePasskey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const credentialId = randomBytes(16);
  const rpIdHash = createHash('sha256').update(RP_ID).digest();
  /** @type {string | undefined} */
  let userHandle;
  /** @param {string} type @param {string} challenge */
  const clientData = (type, challenge) =>
    Buffer.from(JSON.stringify({ type, challenge, origin: ORIGIN, crossOrigin: false }));

  return {
    /** The registration response to `options` (PublicKeyCredentialCreationOptionsJSON). */
    register(/** @type {{challenge: string, user: {id: string}}} */ options) {
      userHandle = options.user.id;
      const cose = cbor(
        cborMap([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(/** @type {string} */ (jwk.x), 'base64url')],
          [-3, Buffer.from(/** @type {string} */ (jwk.y), 'base64url')],
        ]),
      );
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(credentialId.length);
      // Flags: user present, user verified, attested credential data.
      const authData = Buffer.concat([
        rpIdHash,
        Buffer.from([0x45]),
        Buffer.alloc(4),
        Buffer.alloc(16),
        idLength,
        credentialId,
        cose,
      ]);
      const attestationObject = cbor(
        cborMap([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', authData],
        ]),
      );
      return {
        id: b64u(credentialId),
        rawId: b64u(credentialId),
        type: 'public-key',
        response: {
          clientDataJSON: b64u(clientData('webauthn.create', options.challenge)),
          attestationObject: b64u(attestationObject),
          transports: ['internal'],
        },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      };
    },
    /** The assertion answering `options` (PublicKeyCredentialRequestOptionsJSON). */
    assert(/** @type {{challenge: string}} */ options) {
      const authData = Buffer.concat([rpIdHash, Buffer.from([0x05]), Buffer.alloc(4)]);
      const data = clientData('webauthn.get', options.challenge);
      const signature = sign(
        'sha256',
        Buffer.concat([authData, createHash('sha256').update(data).digest()]),
        privateKey,
      );
      return {
        id: b64u(credentialId),
        rawId: b64u(credentialId),
        type: 'public-key',
        response: {
          clientDataJSON: b64u(data),
          authenticatorData: b64u(authData),
          signature: b64u(signature),
          ...(userHandle && { userHandle }),
        },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      };
    },
  };
}

// ---- the sign-in ------------------------------------------------------------------------
const attr = (/** @type {string} */ html, /** @type {RegExp} */ re) => re.exec(html)?.[1];
const unescapeHtml = (/** @type {string} */ s) =>
  s
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
/** The passkey options of the form `kind` on a page. */
export const passkeyOptions = (/** @type {string} */ html, /** @type {string} */ kind) =>
  JSON.parse(
    unescapeHtml(attr(html, new RegExp(`data-passkey="${kind}" data-options="([^"]+)"`)) ?? '{}'),
  );
export const csrfOf = (/** @type {string} */ html) =>
  attr(html, /name="csrf" value="([^"]+)"/) ?? '';
export const totpKeyOf = (/** @type {string} */ html) =>
  attr(html, /id="totp-secret" type="text" readonly value="([A-Z2-7]+)"/) ?? '';

/**
 * @typedef {object} RealmTarget
 * @property {string} url         where the token service listens
 * @property {string} tenant
 * @property {string} redirectUri the portal's callback
 */

/**
 * Starts the portal's authorization request in `b` and follows it to the realm's page.
 * @param {ReturnType<typeof browser>} b @param {RealmTarget} t
 */
export async function start(b, t) {
  const verifier = b64u(randomBytes(32));
  const query = new URLSearchParams({
    client_id: 'portal',
    response_type: 'code',
    redirect_uri: t.redirectUri,
    scope: 'openid email profile',
    code_challenge: b64u(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
    state: b64u(randomBytes(8)),
  });
  const auth = await b.go(`${t.url}/realms/${t.tenant}/protocol/openid-connect/auth?${query}`);
  if (auth.status !== 303)
    throw new Error(`authorization: ${auth.status} ${auth.text.slice(0, 200)}`);
  const page = await follow(b, t, auth);
  return {
    verifier,
    page,
    path: new URL(/** @type {string} */ (auth.headers.location), t.url).pathname,
  };
}

/**
 * Follows the realm's redirects; the answer that leaves for the portal (the callback) or a page.
 * @param {ReturnType<typeof browser>} b @param {RealmTarget} t @param {{status: number, headers: any, text: string}} res
 */
export async function follow(b, t, res) {
  let current = res;
  while (current.status === 303 || current.status === 302) {
    const location = new URL(current.headers.location, t.url);
    if (!location.pathname.startsWith('/realms/')) return current;
    current = await b.go(`${t.url}${location.pathname}${location.search}`);
  }
  return current;
}

/** Posts a form of the interaction and follows it. */
export async function post(
  /** @type {ReturnType<typeof browser>} */ b,
  /** @type {RealmTarget} */ t,
  /** @type {string} */ path,
  /** @type {Record<string, string>} */ form,
) {
  return follow(b, t, await b.go(`${t.url}${path}`, { method: 'POST', form }));
}

/**
 * Posts the password form as a person does: a 429 (every password checker busy, or a budget
 * spent) is tried again after its Retry-After.
 * @param {ReturnType<typeof browser>} b @param {RealmTarget} t @param {string} path
 * @param {{csrf: string, email: string, password: string}} form
 */
export async function postPassword(b, t, path, form) {
  for (let attempt = 1; ; attempt += 1) {
    const res = await b.go(`${t.url}${path}/login`, { method: 'POST', form });
    if (res.status !== 429 || attempt === 50) return follow(b, t, res);
    await new Promise((r) => setTimeout(r, Number(res.headers['retry-after'] ?? 1) * 1000));
  }
}

/** The portal's code exchange: the sign-in is done when the realm answers tokens. */
export async function exchange(
  /** @type {RealmTarget} */ t,
  /** @type {{status: number, headers: any}} */ callback,
  /** @type {string} */ verifier,
  /** @type {string} */ localAddress,
) {
  const location = callback.headers.location;
  const code = location && new URL(location).searchParams.get('code');
  if (!code)
    throw new Error(
      `no code: ${callback.status} ${location} ${/<h1>([^<]*)<\/h1>/.exec(/** @type {{text?: string}} */ (callback).text ?? '')?.[1]}`,
    );
  const res = await fetchRaw(`${t.url}/realms/${t.tenant}/protocol/openid-connect/token`, {
    method: 'POST',
    localAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: t.redirectUri,
      client_id: 'portal',
      code_verifier: verifier,
    }).toString(),
  });
  if (res.status !== 200) throw new Error(`code exchange: ${res.status} ${res.text.slice(0, 200)}`);
  return JSON.parse(res.text);
}
