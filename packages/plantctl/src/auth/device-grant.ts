/**
 * The OAuth 2.0 Device Authorization Grant (RFC 8628) as a client: ask the realm for a device
 * code (§3.1), show the person where to approve and the code to check (§3.3), and poll the
 * token endpoint at the interval the realm set (§3.4), slowing down by 5 s at each `slow_down`
 * and on a connection timeout (§3.5), until approval, denial or expiry.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError, EXIT } from '../exit-codes.js';
import type { DpopKey } from './dpop-key.js';
import {
  asTokenResponse,
  OAuthError,
  postWithProof,
  type TokenResponse,
} from './token-endpoint.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
}

export interface DeviceGrantRequest {
  deviceEndpoint: string;
  tokenEndpoint: string;
  clientId: string;
  audience: string;
  key: DpopKey;
  /** RFC 9470 step-up: the acr and max_age the API's challenge asked for. */
  acrValues?: string;
  maxAge?: number;
  /** Where the person reads the code (stderr: stdout stays for the command's answer). */
  tell: (line: string) => void;
}

/** What polling does after an answer: wait this many seconds and poll again, or stop. */
export type PollStep = { next: 'poll'; intervalSeconds: number } | { next: 'stop'; reason: string };

/** RFC 8628 §3.5: the client's reaction to each error of the token endpoint while polling. */
export function afterPollError(code: string, intervalSeconds: number): PollStep {
  switch (code) {
    case 'authorization_pending':
      return { next: 'poll', intervalSeconds };
    case 'slow_down':
      return { next: 'poll', intervalSeconds: intervalSeconds + 5 };
    case 'access_denied':
      return { next: 'stop', reason: 'The sign-in was denied' };
    case 'expired_token':
      return {
        next: 'stop',
        reason: 'The code expired before it was approved: run plantctl login again',
      };
    default:
      return { next: 'stop', reason: `The realm refused the sign-in (${code})` };
  }
}

export async function deviceGrant(request: DeviceGrantRequest): Promise<TokenResponse> {
  const authorization = await startDeviceAuthorization(request);
  request.tell(`To sign in, open ${authorization.verification_uri}`);
  request.tell(`and enter the code ${authorization.user_code}`);
  if (authorization.verification_uri_complete)
    request.tell(`(or open ${authorization.verification_uri_complete})`);
  request.tell('Check that the page shows this code before you approve. Waiting…');
  return pollForToken(request, authorization);
}

async function startDeviceAuthorization(request: DeviceGrantRequest): Promise<DeviceAuthorization> {
  const body = await postWithProof(
    request.deviceEndpoint,
    {
      client_id: request.clientId,
      scope: 'openid offline_access',
      resource: request.audience,
      ...(request.acrValues === undefined ? {} : { acr_values: request.acrValues }),
      ...(request.maxAge === undefined ? {} : { max_age: String(request.maxAge) }),
    },
    request.key,
  ).catch((error: unknown) => {
    if (error instanceof OAuthError)
      throw new CliError(
        `The realm refused to start a sign-in: ${error.message}`,
        EXIT.signInNeeded,
      );
    throw error;
  });
  if (typeof body.device_code !== 'string' || typeof body.user_code !== 'string')
    throw new CliError('The realm answered the device authorization without a code');
  return body as unknown as DeviceAuthorization;
}

async function pollForToken(
  request: DeviceGrantRequest,
  authorization: DeviceAuthorization,
): Promise<TokenResponse> {
  let interval = authorization.interval ?? 5;
  const deadline = Date.now() + authorization.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    try {
      const body = await postWithProof(
        request.tokenEndpoint,
        {
          grant_type: DEVICE_CODE_GRANT,
          device_code: authorization.device_code,
          client_id: request.clientId,
        },
        request.key,
      );
      return asTokenResponse(body);
    } catch (error) {
      const code = error instanceof OAuthError ? error.code : 'timeout';
      if (!(error instanceof OAuthError) && !(error instanceof CliError)) throw error;
      const step =
        code === 'timeout'
          ? { next: 'poll' as const, intervalSeconds: interval + 5 }
          : afterPollError(code, interval);
      if (step.next === 'stop') throw new CliError(step.reason, EXIT.signInNeeded);
      interval = step.intervalSeconds;
    }
  }
  const expired = afterPollError('expired_token', interval);
  throw new CliError(expired.next === 'stop' ? expired.reason : 'expired', EXIT.signInNeeded);
}
