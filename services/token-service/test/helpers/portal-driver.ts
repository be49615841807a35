import { createHash, randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import request, { type Response, type Test } from 'supertest';
import { TEST_ENV, uniqueIp, type Harness } from './harness.js';

export const REDIRECT_URI = `${TEST_ENV.PORTAL_URL}/auth/callback`;

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A browser: its own cookie jar and source address. */
export interface Browser {
  ip: string;
  get(path: string): Test;
  post(path: string): Test;
}

export interface StartedSignIn {
  verifier: string;
  state: string;
  nonce: string;
  interactionPath: string;
  form: Response;
  csrf: string;
}

export interface PortalDriver {
  browser(): Browser;
  pathOf(location: string): string;
  startSignIn(b: Browser, extra?: Record<string, string>): Promise<StartedSignIn>;
  completeSignIn(
    b: Browser,
    started: StartedSignIn,
    email: string,
    password: string,
  ): Promise<{ login: Response; resume: Response; callback: URL }>;
  exchange(code: string, verifier: string): Promise<Response>;
}

/** The portal's side of a sign-in to one realm, driven as a browser would. */
export function portalDriver(h: Harness, tenant: string): PortalDriver {
  function browser(): Browser {
    const ip = uniqueIp();
    const agent = request.agent(h.publicUrl);
    return {
      ip,
      get: (path: string) => agent.get(path).set('x-forwarded-for', ip),
      post: (path: string) => agent.post(path).set('x-forwarded-for', ip),
    };
  }

  function pathOf(location: string): string {
    const url = new URL(location, h.publicUrl);
    return `${url.pathname}${url.search}`;
  }

  async function startSignIn(
    b: Browser,
    extra: Record<string, string> = {},
  ): Promise<StartedSignIn> {
    const { verifier, challenge } = pkce();
    const state = randomBytes(8).toString('hex');
    const nonce = randomBytes(8).toString('hex');
    const query = new URLSearchParams({
      client_id: 'portal',
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      scope: 'openid email profile',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    });
    const auth = await b.get(`/realms/${tenant}/protocol/openid-connect/auth?${query}`);
    expect(auth.status).toBe(303);
    const interactionPath = pathOf(auth.headers.location!);
    expect(interactionPath).toMatch(new RegExp(`^/realms/${tenant}/interaction/[A-Za-z0-9_-]+$`));
    const form = await b.get(interactionPath);
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1];
    return { verifier, state, nonce, interactionPath, form, csrf: csrf! };
  }

  async function completeSignIn(
    b: Browser,
    started: StartedSignIn,
    email: string,
    password: string,
  ) {
    const login = await b
      .post(`${started.interactionPath}/login`)
      .type('form')
      .send({ csrf: started.csrf, email, password });
    expect(login.status).toBe(303);
    const resume = await b.get(pathOf(login.headers.location!));
    expect(resume.status).toBe(303);
    if (!/^https?:/.test(resume.headers.location ?? ''))
      throw new Error(`unexpected redirect ${resume.headers.location} ${resume.text}`);
    const callback = new URL(resume.headers.location!);
    return { login, resume, callback };
  }

  async function exchange(code: string, verifier: string): Promise<Response> {
    return request(h.publicUrl).post(h.tokenUrl(tenant)).type('form').send({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: 'portal',
      code_verifier: verifier,
    });
  }

  return { browser, pathOf, startSignIn, completeSignIn, exchange };
}
