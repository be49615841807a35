/**
 * Calls to account-admin's `/api/v1` as the signed-in person: the access token (with a DPoP
 * proof when it is DPoP-bound), one refresh and retry on `invalid_token`, one step-up and retry
 * on RFC 9470's `insufficient_user_authentication`, `If-Match` when the caller holds an ETag,
 * and the API's `{error, message}` turned into a one-line CliError with the documented exit code.
 */
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import type { Session, StepUpChallenge } from '../auth/session.js';

export interface ApiAnswer<T> {
  status: number;
  body: T;
  etag?: string;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** The ETag the change is conditional on (412 when the resource changed since). */
  ifMatch?: string;
  /** Statuses answered rather than thrown (e.g. 404 for "does it exist"). */
  accept?: number[];
}

export class ApiClient {
  constructor(readonly session: Session) {}

  get tenant(): string {
    return this.session.profile.tenant;
  }

  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiAnswer<T>> {
    let res = await this.send(method, path, options, false);
    if (res.status === 401 || res.status === 403) {
      const challenge = parseChallenge(res.headers.get('www-authenticate') ?? '');
      if (challenge.error === 'insufficient_user_authentication') {
        await this.session.stepUp(stepUpOf(challenge));
        res = await this.send(method, path, options, false);
      } else if (res.status === 401 && challenge.error === 'invalid_token') {
        res = await this.send(method, path, options, true);
      }
    }
    const body = await readBody(res);
    if (res.ok || options.accept?.includes(res.status)) {
      const etag = res.headers.get('etag') ?? undefined;
      return {
        status: res.status,
        body: body as T,
        headers: res.headers,
        ...(etag ? { etag } : {}),
      };
    }
    throw apiError(method, path, res.status, body);
  }

  private async send(method: string, path: string, options: RequestOptions, refresh: boolean) {
    const url = `${this.session.profile.api}${path}`;
    const access = await this.session.accessToken(refresh);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (access.type.toLowerCase() === 'dpop') {
      headers.authorization = `DPoP ${access.token}`;
      headers.dpop = await (await this.session.key()).proof(method, url, {
        accessToken: access.token,
      });
    } else headers.authorization = `Bearer ${access.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
    try {
      return await fetch(url, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
    } catch (error) {
      throw new CliError(`Cannot reach the portal at ${url}: ${(error as Error).message}`);
    }
  }
}

async function readBody(res: Response): Promise<unknown> {
  if (res.status === 204) return undefined;
  const text = await res.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const EXIT_OF_STATUS: Record<number, ExitCode> = {
  401: EXIT.signInNeeded,
  404: EXIT.notFound,
  409: EXIT.conflict,
  412: EXIT.conflict,
};

/** The API's refusal of one call: the CliError of its status, which the caller may read. */
export class ApiError extends CliError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message, EXIT_OF_STATUS[status] ?? EXIT.error);
    this.name = 'ApiError';
  }
}

export function apiError(method: string, path: string, status: number, body: unknown): ApiError {
  const message =
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { message?: unknown }).message === 'string'
      ? (body as { message: string }).message
      : `HTTP ${status}`;
  const hint = status === 412 ? ' (it changed since it was read: read it, or plan, again)' : '';
  return new ApiError(`${method} ${path}: ${status} ${message}${hint}`, status);
}

/** The auth-params of a `Bearer` challenge (RFC 6750 §3, RFC 9470 §3). */
export function parseChallenge(header: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const match of header.matchAll(/([a-z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi))
    params[match[1]!.toLowerCase()] = match[2] ?? match[3] ?? '';
  return params;
}

function stepUpOf(challenge: Record<string, string>): StepUpChallenge {
  const maxAge = Number(challenge.max_age);
  return {
    ...(challenge.acr_values ? { acrValues: challenge.acr_values } : {}),
    ...(Number.isInteger(maxAge) && maxAge >= 0 ? { maxAge } : {}),
  };
}
