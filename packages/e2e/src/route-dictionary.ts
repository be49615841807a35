/**
 * The route-table fuzzer's dictionary sweep: every value of a fixed dictionary of known-bad
 * values (forged page cursors, number literals past int64, NUL, empty, prototype names) in
 * every input of a route, one at a time: each path parameter, query parameter and body field,
 * with real values everywhere else and every real caller's credentials at once (a bearer token
 * and a session cookie: each route reads the one it takes). Random cases find combinations;
 * this finds any single bad value in any single place, on every run.
 */
import type { Route } from '@plant/shared/http';
import { NUMBER_LITERALS } from './hostile-arbitraries.js';
import {
  encode,
  FORGED_CURSORS,
  isJsonText,
  knownOf,
  type FuzzCase,
  type FuzzContext,
} from './route-fuzzer.js';

export const DICTIONARY: readonly string[] = [
  ...FORGED_CURSORS,
  ...NUMBER_LITERALS,
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '..',
  '%',
  '%00',
  '__proto__',
  'constructor',
  '🌵',
  '\u202e',
  'x'.repeat(2000),
];

const PARAM = /:([A-Za-z_][A-Za-z0-9_]*)/g;

/** The value of `name` where it is not the one under test: its first real value, or a plain word. */
const usual = (name: string, ctx: FuzzContext) => knownOf(name, ctx)[0] ?? 'x';

/** A JSON value for a body field: a JSON text as it is (`[]`, `5`, `1e309`), anything else as a string. */
const asJson = (value: string) => (isJsonText(value) ? value : JSON.stringify(value));

export function dictionaryCases(
  route: Pick<Route, 'method' | 'path' | 'input'>,
  ctx: FuzzContext,
): FuzzCase[] {
  const headers: Record<string, string> = Object.assign({}, ...ctx.credentials);
  const body = route.input?.body;
  const pathWith = (slot?: string, value?: string) =>
    route.path.replace(PARAM, (_m, name: string) =>
      encode(name === slot ? value! : usual(name, ctx)),
    );
  const bodyWith = (
    slot?: string,
    value?: string,
    quoted = false,
  ): Pick<FuzzCase, 'headers' | 'body'> => {
    if (body === undefined) return { headers };
    const fields = body.fields
      .filter((f) => f === slot || knownOf(f, ctx).length > 0)
      .map((f): [string, string] => [f, f === slot ? value! : usual(f, ctx)]);
    const text =
      body.type === 'json'
        ? `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${k === slot && quoted ? JSON.stringify(v) : asJson(v)}`).join(',')}}`
        : fields.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
    return {
      headers: {
        ...headers,
        'content-type':
          body.type === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
      },
      body: Buffer.from(text, 'utf8'),
    };
  };
  const at = (
    path: string,
    query: string | undefined,
    rest: Pick<FuzzCase, 'headers' | 'body'>,
  ): FuzzCase => ({
    method: route.method,
    url: query === undefined ? path : `${path}?${query}`,
    ...rest,
  });

  const cases: FuzzCase[] = [];
  for (const [, param] of route.path.matchAll(PARAM))
    for (const value of DICTIONARY) cases.push(at(pathWith(param, value), undefined, bodyWith()));
  for (const name of route.input?.query ?? []) {
    const q = encode(name);
    for (const value of DICTIONARY) cases.push(at(pathWith(), `${q}=${encode(value)}`, bodyWith()));
    const real = encode(usual(name, ctx));
    for (const query of [`${q}=${real}&${q}=${real}`, `${q}[]=${real}`, `${q}[a]=${real}`, q])
      cases.push(at(pathWith(), query, bodyWith()));
  }
  for (const field of body?.fields ?? []) {
    for (const value of DICTIONARY) {
      cases.push(at(pathWith(), undefined, bodyWith(field, value)));
      if (body!.type === 'json' && isJsonText(value))
        cases.push(at(pathWith(), undefined, bodyWith(field, value, true)));
    }
  }
  return cases;
}
