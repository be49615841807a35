/**
 * Sign-in in the person's browser with a loopback redirect (RFC 8252 §7.3) and PKCE (RFC 7636):
 * plantctl listens on 127.0.0.1 on a port the system picks, sends the browser to the realm's
 * authorization endpoint, and takes the code the realm redirects back with, checking `state`.
 * The code is bound to plantctl's DPoP key (`dpop_jkt`, RFC 9449 §10) and exchanged with a
 * proof, so the refresh token is bound to the same key.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CliError, EXIT } from '../exit-codes.js';
import type { DpopKey } from './dpop-key.js';
import {
  asTokenResponse,
  OAuthError,
  postWithProof,
  type TokenResponse,
} from './token-endpoint.js';

export interface LoopbackRequest {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  clientId: string;
  audience: string;
  key: DpopKey;
  acrValues?: string;
  maxAge?: number;
  /** Open the system browser (false: only print the URL). */
  open: boolean;
  tell: (line: string) => void;
}

export async function loopbackSignIn(request: LoopbackRequest): Promise<TokenResponse> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const callback = listenForCallback(state);
  const server = await callback.listening;
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    const url = new URL(request.authorizationEndpoint);
    url.search = new URLSearchParams({
      client_id: request.clientId,
      response_type: 'code',
      redirect_uri: redirectUri,
      scope: 'openid offline_access',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state,
      resource: request.audience,
      dpop_jkt: await request.key.thumbprint(),
      ...(request.acrValues === undefined ? {} : { acr_values: request.acrValues }),
      ...(request.maxAge === undefined ? {} : { max_age: String(request.maxAge) }),
    }).toString();
    request.tell(`Open this page to sign in: ${url.href}`);
    if (request.open) openBrowser(url.href);
    const code = await callback.code;
    const body = await postWithProof(
      request.tokenEndpoint,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: request.clientId,
        code_verifier: verifier,
        resource: request.audience,
      },
      request.key,
    ).catch((error: unknown) => {
      if (error instanceof OAuthError)
        throw new CliError(`The realm refused the sign-in: ${error.message}`, EXIT.signInNeeded);
      throw error;
    });
    return asTokenResponse(body);
  } finally {
    server.close();
  }
}

/** One callback, then the listener is done: anything else on the port is a 404. */
function listenForCallback(state: string): { listening: Promise<Server>; code: Promise<string> } {
  let deliver!: (code: string) => void;
  let fail!: (error: Error) => void;
  const code = new Promise<string>((resolve, reject) => {
    deliver = resolve;
    fail = reject;
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    const params = url.searchParams;
    res.writeHead(200, {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
    });
    if (params.get('state') !== state) {
      // Another page cannot finish this sign-in: it does not know the state.
      res.end('This sign-in link is not the one plantctl started. Nothing was signed in.\n');
      return;
    }
    const error = params.get('error');
    const received = params.get('code');
    if (error !== null || received === null) {
      res.end('The sign-in was not completed. You can close this page.\n');
      fail(
        new CliError(`The realm refused the sign-in (${error ?? 'no code'})`, EXIT.signInNeeded),
      );
      return;
    }
    res.end('Signed in to plantctl. You can close this page.\n');
    deliver(received);
  });
  const listening = new Promise<Server>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
  return { listening, code };
}

function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  const child = spawn(command, args, { stdio: 'ignore', detached: true });
  // No browser to open is fine: the URL is printed.
  child.on('error', () => {});
  child.unref();
}
