/**
 * fast-check generators of hostile input, as raw text (so duplicate keys, huge numeric
 * literals, prototype keys, truncation and wrong encodings reach the server exactly as an
 * attacker would send them); `hostile-runner.ts` sends them.
 */
import fc from 'fast-check';

export const SQL_INJECTION = [
  "' OR '1'='1",
  "'; DROP TABLE plants.plants; --",
  '1; SELECT pg_sleep(5)',
  "' UNION SELECT secret_digest FROM auth.service_accounts --",
  "\\x00'); DELETE FROM auth.realms; --",
  '$1',
  '?',
  '%',
  "E'\\\\'",
];
export const HEADER_INJECTION = [
  'x\r\nSet-Cookie: pwned=1',
  'x\nLocation: http://evil.example',
  '\r\n\r\nHTTP/1.1 200 OK',
  'a\u0000b',
  '\u2028\u2029',
];
export const UNICODE_TRAPS = [
  '\u202eRTL override\u202c',
  '\u200f\u200e\u061c',
  '\u0000',
  'nul\u0000inside',
  '\ud800',
  '\udfff',
  'lone \ud83c high',
  '🌵🪴🌱',
  '👩‍👩‍👧‍👦',
  '\ufeffBOM',
  '\uffff\ufffe',
  'e\u0301\u0301\u0301',
  '\u0007\u001b[31m',
  'ＡＢＣ',
  '𝕻𝖑𝖆𝖓𝖙',
  ' ',
  '',
  '\t\n\r',
];
export const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '__defineGetter__',
  'valueOf',
];
export const NUMBER_LITERALS = [
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '18446744073709551616',
  '123456789012345678901234567890123456789',
  '1e308',
  '1e309',
  '-1e309',
  '4.9e-324',
  '1e-400',
  '-0',
  '0.0',
  '1.0',
  '1.5',
  '1E2',
  '00',
  '01',
  '0x10',
  '1_000',
  '+1',
  '.5',
  '5.',
  '-',
  '1e',
  'NaN',
  'Infinity',
  '-Infinity',
  '9007199254740993',
];

/** Strings of every kind: printable, any code point (lone surrogates included), traps, long. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ...UNICODE_TRAPS,
      ...SQL_INJECTION,
      ...HEADER_INJECTION,
      ...PROTO_KEYS,
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('a', '🌵', '\u202e', 'x'), fc.integer({ min: 200, max: 20_000 }))
      .map(([c, n]) => c.repeat(n)),
  },
);

/** Numeric literals: integers, past int64, doubles, and the spellings parsers disagree on. */
export const numberText: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.constantFrom(...NUMBER_LITERALS),
);

const stringText = hostileString.map((s) => JSON.stringify(s));
/** A JSON string whose lone surrogates are written raw (invalid UTF-16 once encoded). */
const rawStringText = hostileString.map((s) => `"${s.replace(/["\\]/g, '')}"`);
const keyText = fc.oneof(
  fc
    .constantFrom(
      ...PROTO_KEYS,
      'id',
      'name',
      'tag',
      'tenant',
      'role',
      'grants',
      'secret',
      'client_id',
    )
    .map((k) => JSON.stringify(k)),
  stringText,
);

/** Any JSON value as text, nested, with repeated and prototype keys. */
export const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('null', 'true', 'false', '{}', '[]', '""'),
    numberText,
    stringText,
    rawStringText,
    fc.array(tie('value'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(keyText, tie('value')), { maxLength: 5 })
      .map((entries) => `{${entries.map(([k, v]) => `${k}:${v}`).join(',')}}`),
  ),
})).value;

/** Nesting far beyond anything sane: arrays, objects, mixed. */
export const deepJsonText: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 64, max: 100_000 }), fc.constantFrom('array', 'object', 'mixed'))
  .map(([n, kind]) => {
    if (kind === 'array') return `${'['.repeat(n)}${']'.repeat(n)}`;
    if (kind === 'object') return `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    return `{"id":1,"name":${'[{"x":'.repeat(Math.min(n, 5000))}0${'}]'.repeat(Math.min(n, 5000))}}`;
  });

/** An object biased toward one shape: its known fields with hostile values, extra and repeated keys. */
export function shapedObjectText(
  fields: Record<string, fc.Arbitrary<string>>,
): fc.Arbitrary<string> {
  const entries = Object.entries(fields).map(([name, plausible]) =>
    fc.option(
      fc.tuple(
        fc.constant(JSON.stringify(name)),
        fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 2, arbitrary: jsonText }),
      ),
      { nil: undefined, freq: 4 },
    ),
  );
  const extra = fc.array(fc.tuple(keyText, jsonText), { maxLength: 3 });
  return fc.tuple(fc.tuple(...entries), extra, fc.boolean()).map(([known, more, repeatFirst]) => {
    const pairs = [...known.filter((e): e is [string, string] => e !== undefined), ...more];
    if (repeatFirst && pairs.length > 0) pairs.push(pairs[0]!);
    return `{${pairs.map(([k, v]) => `${k}:${v}`).join(',')}}`;
  });
}

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'APPLICATION/JSON',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=bogus-9',
  'application/json;;;',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json\u00e9',
  '*/*',
  '',
];

export interface BodyCase {
  contentType: string;
  body: Buffer;
  /** How the JSON text was turned into bytes, for the report. */
  encoding: string;
}

/** A JSON text sent with a (mostly right) content type, encoded, sometimes truncated or as random bytes. */
export function bodyCase(text: fc.Arbitrary<string>): fc.Arbitrary<BodyCase> {
  return fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.constant('application/json') },
        { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
      ),
      fc.oneof(
        { weight: 8, arbitrary: text },
        { weight: 1, arbitrary: deepJsonText },
        { weight: 1, arbitrary: jsonText },
      ),
      fc.constantFrom(
        'utf8',
        'utf8',
        'utf8',
        'utf8',
        'utf16le',
        'latin1',
        'truncated',
        'bytes',
        'bom',
      ),
      fc.uint8Array({ maxLength: 64 }),
      fc.nat(),
    )
    .map(([contentType, json, encoding, bytes, cut]) => {
      let body: Buffer;
      if (encoding === 'utf16le' || encoding === 'latin1') body = Buffer.from(json, encoding);
      else if (encoding === 'truncated')
        body = Buffer.from(json.slice(0, json.length === 0 ? 0 : cut % json.length), 'utf8');
      else if (encoding === 'bytes') body = Buffer.from(bytes);
      else if (encoding === 'bom')
        body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json, 'utf8')]);
      else body = Buffer.from(json, 'utf8');
      return { contentType, body, encoding };
    });
}

/** Percent-encodes what Node would refuse in a request path, leaving other hostile bytes raw. */
export function pathSafe(raw: string): string {
  return [...raw]
    .map((ch) =>
      /^[\u0021-\u00ff]$/.test(ch)
        ? ch
        : encodeURIComponent(ch.replace(/[\ud800-\udfff]/g, '\ufffd')),
    )
    .join('');
}

/** A query string: known and unknown keys, repeated, bracketed, hostile values, raw or encoded. */
export const queryText: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom('limit', 'cursor') },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            'limit[]',
            'limit[a]',
            'cursor[0]',
            'LIMIT',
            ' limit',
            'limit ',
            '__proto__',
            'constructor',
            'tenant',
            'after',
            'id',
          ),
        },
        { weight: 1, arbitrary: hostileString },
      ),
      fc.oneof(
        {
          weight: 3,
          arbitrary: fc.constantFrom(
            '1',
            '100',
            '1000',
            '1001',
            '0',
            '-1',
            '1e2',
            '10.0',
            '0010',
            ' 5',
            '5 ',
            '',
            'djE6MQ',
            'djE6LTE',
            'djE6OTIyMzM3MjAzNjg1NDc3NTgwOA',
            'djE6',
            '=====',
          ),
        },
        { weight: 2, arbitrary: numberText },
        { weight: 2, arbitrary: hostileString },
      ),
      fc.constantFrom('encoded', 'raw', 'keyonly'),
    ),
    { maxLength: 6 },
  )
  .map((pairs) =>
    pairs
      .map(([k, v, mode]) => {
        if (mode === 'keyonly') return encodeURIComponent(k.replace(/[\ud800-\udfff]/g, '\ufffd'));
        if (mode === 'raw') return pathSafe(`${k}=${v}`);
        return `${encodeURIComponent(k.replace(/[\ud800-\udfff]/g, '\ufffd'))}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '\ufffd'))}`;
      })
      .join('&'),
  );

/** What Node lets through in a header value: the UTF-8 bytes as latin1, without control characters. */
export function headerSafe(raw: string): string {
  return Buffer.from(raw, 'utf8')
    .toString('latin1')
    .replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
}
