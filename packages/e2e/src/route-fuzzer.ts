/**
 * The route-table fuzzer: for one route of a service's table (its method, path and declared
 * inputs) hostile requests that reach every path parameter, every query parameter and every
 * body field, with real values mixed in (the tenant, ids that exist, credentials) so cases get
 * past authentication and lookups; the same for what a mount serves. The route table is the
 * list, so a new route is fuzzed without anyone adding it here (`hostile-every-route.test.ts`).
 */
import fc from 'fast-check';
import type { RouteInput } from '@plant/shared/http';
import {
  bodyCase,
  CONTENT_TYPES,
  headerSafe,
  hostileString,
  jsonText,
  NUMBER_LITERALS,
  numberText,
  pathSafe,
  PROTO_KEYS,
  shapedObjectText,
  type BodyCase,
} from './hostile-arbitraries.js';

/** What a caller of one app knows: real values by name, and the headers it authenticates with. */
export interface FuzzContext {
  /** Real values by path parameter, query parameter or body field name (the tenant, ids that exist, a form's CSRF token). */
  known: Readonly<Record<string, readonly string[]>>;
  /** Header sets of real callers (a bearer token, a session cookie and its CSRF token); a case sends one, none, or a forged one. */
  credentials: readonly Readonly<Record<string, string>>[];
}

/** One request as sent: method, path and query, headers, body. */
export interface FuzzCase {
  method: string;
  url: string;
  headers: Record<string, string | undefined>;
  body?: Buffer;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const FORM = 'application/x-www-form-urlencoded';

const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
/** Percent-encodes a generated string; lone surrogates become U+FFFD (encodeURIComponent refuses them). */
export const encode = (text: string) =>
  encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '\ufffd'));

/** Page cursors a client can forge: past int64 either way, zero, signs, spaces, NUL, exponents, the other service's prefix. */
export const FORGED_CURSORS = [
  'before:9999999999999999999',
  'before:9223372036854775808',
  'before:9223372036854775807',
  'before:-9223372036854775809',
  'before:0',
  'before:-1',
  'before:01',
  'before:1e3',
  'before: 1',
  'before:1\u0000',
  'before:',
  'v1:-9223372036854775809',
  'v1:9223372036854775808',
  'v1:9999999999999999999',
  'v1:-0',
  'v1:1.5',
  'v1:0x10',
  'v1:',
].map(base64url);

const cursorText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...FORGED_CURSORS),
  fc
    .tuple(fc.constantFrom('before:', 'v1:', ''), numberText)
    .map(([prefix, n]) => base64url(prefix + n)),
  // Standard base64 (`+`, `/`, `=`): the same bytes in the spelling the parsers must refuse.
  fc
    .tuple(fc.constantFrom('before:', 'v1:'), numberText)
    .map(([prefix, n]) => Buffer.from(prefix + n, 'utf8').toString('base64')),
  hostileString.map(base64url),
);

/** The real values of `name`; own names only: a hostile key (`constructor`) must not find the prototype's. */
export const knownOf = (name: string, ctx: FuzzContext): readonly string[] =>
  Object.hasOwn(ctx.known, name) ? ctx.known[name]! : [];

/** A value for the parameter or field `name`: a real one or a near miss, a forged cursor, a number literal, any hostile string. */
function valueFor(name: string, ctx: FuzzContext): fc.Arbitrary<string> {
  const known = knownOf(name, ctx);
  const nearMisses = known.flatMap((v) => [
    v.toUpperCase(),
    `${v}x`,
    `${v}\u0000`,
    ` ${v}`,
    v.slice(0, -1),
    v.repeat(20),
  ]);
  return fc.oneof(
    ...(known.length > 0
      ? [
          { weight: 4, arbitrary: fc.constantFrom(...known) },
          { weight: 1, arbitrary: fc.constantFrom(...nearMisses) },
        ]
      : []),
    { weight: 2, arbitrary: cursorText },
    { weight: 2, arbitrary: fc.oneof(numberText, fc.constantFrom(...NUMBER_LITERALS)) },
    { weight: 3, arbitrary: hostileString },
  );
}

/** The declared name a hostile spelling of a key (`limit[]`, ` LIMIT`) stands for, so it gets that name's values. */
const nameOf = (key: string, names: readonly string[]) =>
  names.find((n) => key.toLowerCase().includes(n)) ?? key;

const HOSTILE_SEGMENTS = [
  '..',
  '.',
  '%2e%2e',
  '%2E',
  '%2f',
  '%2F..',
  '%5c',
  '%00',
  'a%00b',
  '%ZZ',
  '%',
  '%20',
  '+',
  '~',
  '*',
  ';',
  'a;b=c',
  '__proto__',
  'constructor',
  'x'.repeat(300),
];

/** A path parameter: mostly a real value, so the route's other inputs are reached past its lookups. */
function segmentFor(name: string, ctx: FuzzContext): fc.Arbitrary<string> {
  const known = knownOf(name, ctx);
  return fc.oneof(
    ...(known.length > 0 ? [{ weight: 6, arbitrary: fc.constantFrom(...known).map(encode) }] : []),
    { weight: 4, arbitrary: valueFor(name, ctx).map(encode) },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
    // Raw: may add segments, a query or a fragment of its own.
    { weight: 1, arbitrary: hostileString.map(pathSafe) },
  );
}

/** The path `template` (`/a/:id/b`) with a generated value for each parameter. */
export function pathFor(template: string, ctx: FuzzContext): fc.Arbitrary<string> {
  const pieces = template.split(/:([A-Za-z_][A-Za-z0-9_]*)/);
  const parts = pieces.map((piece, i) =>
    i % 2 === 0 ? fc.constant(piece) : segmentFor(piece, ctx),
  );
  return fc.tuple(...parts).map((done) => done.join(''));
}

/** A query string over `names`: each with real and hostile values, repeated (arrays), bracketed, bare, empty, unknown keys. */
export function queryFor(names: readonly string[], ctx: FuzzContext): fc.Arbitrary<string> {
  const spellings = names.flatMap((n) => [
    `${n}[]`,
    `${n}[0]`,
    `${n}[a]`,
    n.toUpperCase(),
    ` ${n}`,
    `${n} `,
  ]);
  const key = fc.oneof(
    ...(names.length > 0
      ? [
          { weight: 8, arbitrary: fc.constantFrom(...names) },
          { weight: 2, arbitrary: fc.constantFrom(...spellings) },
        ]
      : []),
    { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) },
    { weight: 1, arbitrary: hostileString },
  );
  const pair = key.chain((k) =>
    fc.tuple(
      fc.constant(k),
      valueFor(nameOf(k, names), ctx),
      fc.constantFrom('encoded', 'encoded', 'encoded', 'raw', 'bare', 'empty'),
    ),
  );
  return fc.array(pair, { maxLength: 6 }).map((pairs) =>
    pairs
      .map(([k, v, mode]) => {
        if (mode === 'bare') return encode(k);
        if (mode === 'empty') return `${encode(k)}=`;
        if (mode === 'raw') return pathSafe(`${k}=${v}`);
        return `${encode(k)}=${encode(v)}`;
      })
      .join('&'),
  );
}

export const isJsonText = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** A JSON object with `fields` (real values go in as JSON when they are JSON texts, `[]` or `5`, else as strings), extra and repeated keys. */
function jsonBodyFor(fields: readonly string[], ctx: FuzzContext): fc.Arbitrary<BodyCase> {
  const field = (name: string) =>
    valueFor(name, ctx).map((v) =>
      isJsonText(v) ? v : JSON.stringify(v.replace(/[\ud800-\udfff]/g, '\ufffd')),
    );
  return bodyCase(shapedObjectText(Object.fromEntries(fields.map((name) => [name, field(name)]))));
}

/** A form (`application/x-www-form-urlencoded`) over `fields`, with unknown and repeated keys, odd charsets, truncated. */
export function formBodyFor(fields: readonly string[], ctx: FuzzContext): fc.Arbitrary<BodyCase> {
  const key = fc.oneof(
    ...(fields.length > 0 ? [{ weight: 6, arbitrary: fc.constantFrom(...fields) }] : []),
    { weight: 1, arbitrary: fc.constantFrom(...fields.map((f) => `${f}[]`), ...PROTO_KEYS) },
    { weight: 1, arbitrary: hostileString },
  );
  const pair = key.chain((k) =>
    fc.tuple(
      fc.constant(k),
      valueFor(nameOf(k, fields), ctx),
      fc.constantFrom<'encoded' | 'raw'>('encoded', 'encoded', 'raw'),
    ),
  );
  // Real values for some of the fields (a form that could be accepted), then hostile pairs after them.
  const plausible = fc
    .tuple(
      ...fields.map((f) =>
        fc.option(
          fc
            .constantFrom(...knownOf(f, ctx), '')
            .map((v): [string, string, 'encoded'] => [f, v, 'encoded']),
          { nil: undefined, freq: 3 },
        ),
      ),
    )
    .chain((real) =>
      fc
        .array(pair, { maxLength: 2 })
        .map((extra) => [...real.filter((r) => r !== undefined), ...extra]),
    );
  return fc
    .tuple(
      fc.oneof(fc.array(pair, { maxLength: fields.length + 3 }), plausible),
      fc.oneof(
        { weight: 6, arbitrary: fc.constant(FORM) },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            ...CONTENT_TYPES,
            `${FORM}; charset=utf-16`,
            `${FORM}; charset=iso-8859-1`,
          ),
        },
      ),
      fc.constantFrom('utf8', 'utf8', 'utf8', 'latin1', 'utf16le', 'truncated'),
      fc.nat(),
    )
    .map(([pairs, contentType, encoding, cut]) => {
      const text = pairs
        .map(([k, v, mode]) => (mode === 'raw' ? `${k}=${v}` : `${encode(k)}=${encode(v)}`))
        .join('&');
      const body =
        encoding === 'truncated'
          ? Buffer.from(text.slice(0, text.length === 0 ? 0 : cut % text.length), 'utf8')
          : Buffer.from(text, encoding as BufferEncoding);
      return { contentType, body, encoding };
    });
}

/** A body for a route's declared input; for a route that reads none, sometimes one anyway. */
function bodyFor(
  input: RouteInput | undefined,
  ctx: FuzzContext,
): fc.Arbitrary<BodyCase | undefined> {
  const declared = input?.body;
  if (declared !== undefined) {
    const body =
      declared.type === 'json'
        ? jsonBodyFor(declared.fields, ctx)
        : formBodyFor(declared.fields, ctx);
    return fc.option(body, { nil: undefined, freq: 8 });
  }
  return fc.option(fc.oneof(bodyCase(jsonText), formBodyFor([], ctx)), { nil: undefined, freq: 2 });
}

/** Credentials of a real caller (mostly), none, or forged ones; sometimes an odd Accept or request id. */
function headersFor(ctx: FuzzContext): fc.Arbitrary<Record<string, string | undefined>> {
  const real = ctx.credentials.length > 0 ? fc.constantFrom(...ctx.credentials) : fc.constant({});
  const forged = fc.oneof(
    hostileString.map((s) => ({ authorization: headerSafe(`Bearer ${s}`) })),
    hostileString.map((s) => ({
      cookie: headerSafe(`aa_session=${s}; csrf_token=${s}`),
      'x-csrf-token': headerSafe(s),
    })),
    real.map((headers: Readonly<Record<string, string>>) =>
      Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, `${v.slice(0, -2)}x`])),
    ),
  );
  const sometimes = <T>(arbitrary: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
  return fc
    .record({
      credentials: fc.oneof(
        { weight: 6, arbitrary: real },
        { weight: 1, arbitrary: fc.constant({}) },
        { weight: 1, arbitrary: forged },
      ),
      accept: sometimes(
        fc.constantFrom(
          'text/html',
          'application/json',
          '*/*',
          'application/xml',
          headerSafe('\u202e'),
        ),
      ),
      requestId: sometimes(hostileString.map(headerSafe)),
    })
    .map(({ credentials, accept, requestId }) => ({
      ...credentials,
      accept,
      'x-request-id': requestId,
    }));
}

function toCase(
  method: string,
  path: string,
  query: string | undefined,
  headers: Record<string, string | undefined>,
  body: BodyCase | undefined,
): FuzzCase {
  const withBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
  return {
    method,
    url: query === undefined ? path : `${path}?${query}`,
    headers: withBody ? { ...headers, 'content-type': body.contentType } : headers,
    ...(withBody ? { body: body.body } : {}),
  };
}

/** Hostile requests for one route: mostly its own method, its path with generated parameters, its query and body. */
export function routeCase(
  route: { method: string; path: string; input?: RouteInput },
  ctx: FuzzContext,
): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      fc.oneof(
        { weight: 10, arbitrary: fc.constant(route.method) },
        { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
      ),
      pathFor(route.path, ctx),
      fc.option(queryFor(route.input?.query ?? [], ctx), { nil: undefined, freq: 6 }),
      headersFor(ctx),
      bodyFor(route.input, ctx),
    )
    .map(([method, path, query, headers, body]) => toCase(method, path, query, headers, body));
}

/**
 * Hostile requests for what a mount serves: its path with generated parameters, then one of
 * `subpaths` (what it is known to serve) or hostile segments, any method, a query over `queryNames`.
 */
export function mountCase(
  mount: { path: string },
  subpaths: readonly string[],
  queryNames: readonly string[],
  ctx: FuzzContext,
): fc.Arbitrary<FuzzCase> {
  const segments = fc
    .array(fc.oneof(fc.constantFrom(...HOSTILE_SEGMENTS), hostileString.map(encode)), {
      minLength: 1,
      maxLength: 3,
    })
    .map((s) => s.join('/'));
  const rest =
    subpaths.length > 0
      ? fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...subpaths) },
          { weight: 1, arbitrary: segments },
        )
      : segments;
  return fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom('GET', 'POST') },
        { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
      ),
      pathFor(mount.path, ctx),
      rest,
      fc.option(queryFor(queryNames, ctx), { nil: undefined, freq: 6 }),
      headersFor(ctx),
      fc.option(fc.oneof(formBodyFor(queryNames, ctx), bodyCase(jsonText)), {
        nil: undefined,
        freq: 2,
      }),
    )
    .map(([method, path, sub, query, headers, body]) =>
      toCase(method, `${path}/${sub.replace(/^\/+/, '')}`, query, headers, body),
    );
}
