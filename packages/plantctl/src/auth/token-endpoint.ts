/**
 * Requests to the realm's token endpoint, each with a DPoP proof so what it issues is bound to
 * plantctl's key. A server that wants a nonce answers `use_dpop_nonce` with a `DPoP-Nonce`
 * header (RFC 9449 §8): the request is sent once more with it.
 */
import { CliError, EXIT } from '../exit-codes.js';
import type { DpopKey } from './dpop-key.js';

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in?: number;
  refresh_token?: string;
  scope?: string;
}

/** An OAuth error answer (RFC 6749 §5.2). */
export class OAuthError extends Error {
  constructor(
    readonly code: string,
    readonly description: string | undefined,
    readonly status: number,
  ) {
    super(description === undefined ? code : `${code}: ${description}`);
    this.name = 'OAuthError';
  }
}

/** POSTs a form with a DPoP proof; the parsed answer, or OAuthError. */
export async function postWithProof(
  url: string,
  form: Record<string, string>,
  key: DpopKey,
): Promise<Record<string, unknown>> {
  let nonce: string | undefined;
  for (let attempt = 0; ; attempt++) {
    const res = await send(url, form, await key.proof('POST', url, nonce ? { nonce } : {}));
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.ok) return body;
    const code = typeof body.error === 'string' ? body.error : `http_${res.status}`;
    const serverNonce = res.headers.get('dpop-nonce');
    if (code === 'use_dpop_nonce' && serverNonce && attempt === 0) {
      nonce = serverNonce;
      continue;
    }
    const description =
      typeof body.error_description === 'string' ? body.error_description : undefined;
    throw new OAuthError(code, description, res.status);
  }
}

async function send(url: string, form: Record<string, string>, proof: string): Promise<Response> {
  try {
    return await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        dpop: proof,
      },
      body: new URLSearchParams(form).toString(),
    });
  } catch (error) {
    throw new CliError(`Cannot reach the realm at ${url}: ${(error as Error).message}`);
  }
}

export function asTokenResponse(body: Record<string, unknown>): TokenResponse {
  if (typeof body.access_token !== 'string' || typeof body.token_type !== 'string')
    throw new CliError('The realm answered without an access token', EXIT.signInNeeded);
  return body as unknown as TokenResponse;
}
