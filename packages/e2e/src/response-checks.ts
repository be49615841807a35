/**
 * What every answer to hostile input must look like, as plain predicates that return a
 * reason (or undefined), so a fuzzer can report the first counterexample with its answer.
 */
import type { Answer } from './http-client.js';

/** Traces of internals that must never reach a client: stack frames, paths, SQL, driver and JS error names. */
const INTERNAL_DETAIL = [
  /\bat [\w.<>$]+ \(/, // stack frame "at fn ("
  /\bat (?:file:|node:|\/)/, // stack frame "at /path" or "at node:internal"
  /node_modules/,
  /\/work\/|\/src\/|\/dist\//,
  /\.(?:ts|js|mjs):\d+/,
  // Postgres and driver wording (not SQL keywords: hostile input echoed in a 400 may contain those).
  /\b(?:knex|pg-protocol|ECONNREFUSED|ECONNRESET|duplicate key value|violates [\w ]*constraint|relation "|syntax error at or near|invalid input syntax for|column "\w+" )/i,
  /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|AssertionError)\b/,
  /Cannot read propert|is not a function|undefined is not/,
];

export function internalDetail(text: string): string | undefined {
  const hit = INTERNAL_DETAIL.find((re) => re.test(text));
  return hit === undefined ? undefined : `leaks internal detail (${hit}): ${text.slice(0, 300)}`;
}

/** `Error` `{error: <status>, message}` with exactly those keys and the status equal to the HTTP one. */
export function errorShapeProblem(answer: Answer): string | undefined {
  const body = answer.body as Record<string, unknown> | undefined;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body))
    return `${answer.status} not a JSON object: ${JSON.stringify(answer.text.slice(0, 200))} (headers ${JSON.stringify(answer.headers)})`;
  const keys = Object.keys(body).sort();
  if (keys.join(',') !== 'error,message') return `keys ${keys.join(',')}`;
  if (body.error !== answer.status) return `error ${String(body.error)} != status ${answer.status}`;
  if (typeof body.message !== 'string' || body.message.length === 0)
    return 'message is not a non-empty string';
  if (!String(answer.headers['content-type'] ?? '').startsWith('application/json'))
    return `content-type ${answer.headers['content-type']}`;
  return undefined;
}

/** RFC 6749 §5.2: `{error: <ascii code>, error_description?: string}`. */
export function oauthErrorProblem(answer: Answer): string | undefined {
  const body = answer.body as Record<string, unknown> | undefined;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body))
    return `${answer.status} not a JSON object: ${JSON.stringify(answer.text.slice(0, 200))} (headers ${JSON.stringify(answer.headers)})`;
  if (typeof body.error !== 'string' || !/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/.test(body.error))
    return `error code ${JSON.stringify(body.error)}`;
  // oidc-provider names the refused scope in invalid_scope answers (`scope`), a harmless extension.
  const extra = Object.keys(body).filter(
    (k) => !['error', 'error_description', 'error_uri', 'scope'].includes(k),
  );
  if (extra.length > 0) return `extra keys ${extra.join(',')}`;
  if (body.error_description !== undefined && typeof body.error_description !== 'string')
    return 'error_description is not a string';
  return undefined;
}

/**
 * The documented exception to the `Error` shape (docs/hardening.md): headers over 16 KiB whose
 * request line reached the server in more than one packet are refused by Node's parser before
 * we can read the method, so we cannot tell a HEAD (which must get no body) from the rest;
 * such a 431 carries the status alone and closes the connection. Whether it happens depends
 * on how the kernel split the request, not on the request.
 */
function isBareHeaderOverflow(answer: Answer): boolean {
  return (
    answer.status === 431 &&
    answer.text === '' &&
    answer.headers['content-length'] === '0' &&
    answer.headers.connection === 'close'
  );
}

/**
 * The properties every answer to hostile input has: no 5xx, no internal detail, and for an
 * error the documented shape (`oauth`: RFC 6749 or, outside the OAuth endpoint's own
 * errors such as an unknown realm, the `Error` shape).
 */
export function hostileAnswerProblem(answer: Answer, kind: 'error' | 'oauth'): string | undefined {
  if (answer.status >= 500) return `status ${answer.status}: ${answer.text.slice(0, 300)}`;
  // A success body is the caller's own data (which may well contain SQL or stack-like text).
  if (answer.status < 400) return undefined;
  const leak = internalDetail(answer.text);
  if (leak !== undefined) return leak;
  if (isBareHeaderOverflow(answer)) return undefined;
  if (kind === 'error') return errorShapeProblem(answer);
  const asError = errorShapeProblem(answer);
  const asOauth = oauthErrorProblem(answer);
  return asError === undefined || asOauth === undefined
    ? undefined
    : `neither Error (${asError}) nor RFC 6749 (${asOauth})`;
}

/** A whole HTML page (an error page of the portal or of sign-in): what a person reading gets. */
export function pageProblem(answer: Answer): string | undefined {
  if (!String(answer.headers['content-type'] ?? '').startsWith('text/html'))
    return `content-type ${answer.headers['content-type']}`;
  if (
    !/^<!doctype html>/i.test(answer.text.trimStart()) ||
    !answer.text.trimEnd().endsWith('</html>')
  )
    return `not a whole HTML page: ${JSON.stringify(answer.text.slice(0, 200))}`;
  return undefined;
}

/** What an answer to any request of the route-table fuzzer must be, beside its route's own rules. */
export interface AnswerRules {
  /** The forms its errors may take besides the `Error` shape (the route's `errors`). */
  errors?: readonly ('page' | 'oauth')[];
  /** Its operation documents a 503 (a dependency down): allowed, in the `Error` shape. */
  may503?: boolean;
  /** The origins a redirect may lead to: the platform's own. */
  origins: readonly string[];
}

/**
 * No 5xx (but a documented 503), no body on HEAD, no redirect off the platform, and an error
 * in the `Error` shape or a form the route declares, never with internal detail.
 */
export function routeAnswerProblem(
  method: string,
  url: string,
  answer: Answer,
  rules: AnswerRules,
): string | undefined {
  if (answer.status >= 500 && !(answer.status === 503 && rules.may503 === true))
    return `status ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (method === 'HEAD')
    return answer.text === ''
      ? undefined
      : `a HEAD answer with a body: ${answer.text.slice(0, 100)}`;
  const location = answer.headers.location;
  if (answer.status >= 300 && answer.status < 400 && location !== undefined)
    return redirectProblem(url, location, rules.origins);
  if (answer.status < 400) return undefined;
  return errorAnswerProblem(answer, rules.errors ?? []);
}

/** A redirect must stay on the platform's own origins. */
function redirectProblem(
  url: string,
  location: string,
  origins: readonly string[],
): string | undefined {
  let target: URL;
  try {
    target = new URL(location, url);
  } catch {
    return `an unreadable Location: ${location}`;
  }
  return origins.includes(target.origin) ? undefined : `a redirect off the platform: ${location}`;
}

/** An error answer: no internal detail, in the `Error` shape or one of the route's `forms`. */
function errorAnswerProblem(
  answer: Answer,
  forms: NonNullable<AnswerRules['errors']>,
): string | undefined {
  const leak = internalDetail(answer.text);
  if (leak !== undefined) return leak;
  if (isBareHeaderOverflow(answer)) return undefined;
  const asError = errorShapeProblem(answer);
  if (asError === undefined) return undefined;
  if (forms.includes('oauth') && oauthErrorProblem(answer) === undefined) return undefined;
  if (forms.includes('page') && pageProblem(answer) === undefined) return undefined;
  return `an error neither in the Error shape${forms.map((f) => ` nor ${f === 'page' ? 'an HTML page' : 'RFC 6749'}`).join('')}: ${asError}`;
}
