/**
 * The realm's invitation page: `GET /realms/<t>/invitation?token=…` shows "Set your password",
 * `POST /realms/<t>/invitation` accepts (people/invitations.ts). Unauthenticated, and a POST
 * hashes a password: each POST takes a point of a per-source budget first, and the hash runs on
 * the password checkers (busy: 429). The token never reaches a log (the access log writes
 * paths without their query string) and the page sends `Referrer-Policy: no-referrer`, so the
 * link does not leak to anything the page loads or links to.
 *
 * CSRF as the sign-in form: the GET sets a random nonce in a strict, path-scoped, HttpOnly
 * cookie and the form carries HMAC(COOKIE_KEYS, tenant, nonce); a cross-site POST has neither.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { keepingRequestContext, type Route } from '@plant/shared/http';
import { requestIdOf } from '@plant/shared/logging';
import { constantTimeEquals, type SourceBudget } from '@plant/shared/security';
import express, { type Request, type Response } from 'express';
import { isTenantName } from '@plant/shared/api';
import { type IdentityContext, waitWording } from '../platform/index.js';
import { acceptInvitation, findInvitation } from './invitations.js';
import { type PasswordCheckers, BUSY, PASSWORD_MAX } from '../passwords/index.js';
import type { Html } from '@plant/shared/page-look';
import { messageCard, page, pageHeaders, unknownRealmPage } from '../oidc/index.js';
import {
  invitationFormPage,
  linkStatePage,
  PASSWORD_MIN,
  type LinkState,
} from './invitation-page.js';

export interface InvitationPageDeps {
  identity: Pick<IdentityContext, 'invitations' | 'secrets' | 'realms'>;
  checkers: PasswordCheckers;
  /** Acceptances tried per source (each may hash a password). */
  budget: SourceBudget;
  csrfKey: string;
  portalUrl: string;
}

const NONCE_COOKIE = 'plant_invitation';
const TOKEN_MAX = 64;

function csrfOf(key: string, tenant: string, nonce: string): string {
  return createHmac('sha256', key).update(`invitation:${tenant}:${nonce}`).digest('base64url');
}

function nonceOf(req: Request): string | undefined {
  const header = req.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [name, value] = part.trim().split('=');
    if (name === NONCE_COOKIE && value !== undefined && /^[A-Za-z0-9_-]{22}$/.test(value))
      return value;
  }
  return undefined;
}

/** What an invitation request's steps share: the deps and the page headers. */
interface InvitationEnv {
  deps: InvitationPageDeps;
  headers: Record<string, string>;
}

const signInOf = (env: InvitationEnv, tenant: string) => ({
  href: `${env.deps.portalUrl.replace(/\/+$/, '')}/login?tenant=${encodeURIComponent(tenant)}`,
});

/** Every invitation page goes out with the page headers (`Referrer-Policy: no-referrer`). */
function send(env: InvitationEnv, res: Response, status: number, body: string): void {
  res.set(env.headers).status(status).type('html').send(body);
}

/** A link that is not pending: 404 when unknown, else 410 (expired, revoked, used), with the sign-in link. */
const sendState = (env: InvitationEnv, res: Response, tenant: string, state: LinkState) =>
  send(
    env,
    res,
    state === 'unknown' ? 404 : 410,
    linkStatePage(tenant, state, signInOf(env, tenant)),
  );

/** The realm, or the unknown-realm page answered (undefined). */
async function realmOf(env: InvitationEnv, req: Request, res: Response) {
  const tenant = String(req.params.tenant);
  if (isTenantName(tenant) && (await env.deps.identity.realms.find(tenant)) !== undefined)
    return tenant;
  send(env, res, 404, unknownRealmPage(tenant, env.deps.portalUrl));
  return undefined;
}

/** The form's hidden fields; a new form (no nonce yet) sets this browser's nonce cookie. */
function formFields(
  env: InvitationEnv,
  res: Response,
  tenant: string,
  token: string,
  nonce?: string,
) {
  const value = nonce ?? randomBytes(16).toString('base64url');
  if (nonce === undefined)
    res.cookie(NONCE_COOKIE, value, {
      httpOnly: true,
      sameSite: 'strict',
      secure: env.deps.portalUrl.startsWith('https:'),
      path: `/realms/${tenant}/invitation`,
    });
  return { token, csrf: csrfOf(env.deps.csrfKey, tenant, value) };
}

/** The form's fields cut to their limits (a password one past the limit, to say it is too long). */
function readForm(req: Request) {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (name: string, max: number) =>
    typeof body[name] === 'string' ? (body[name] as string).slice(0, max) : '';
  return {
    token: text('token', TOKEN_MAX),
    csrf: text('csrf', TOKEN_MAX),
    password: text('password', PASSWORD_MAX + 1),
    confirm: text('confirm', PASSWORD_MAX + 1),
  };
}

/** The password's own rules, checked before anything is hashed. */
function passwordProblem(password: string, confirm: string): string | undefined {
  if (password.length < PASSWORD_MIN)
    return `The password must be at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX)
    return `The password must be at most ${PASSWORD_MAX} characters.`;
  if (password !== confirm) return 'The two passwords differ. Type the same password twice.';
  return undefined;
}

/** The invitation a pending link names, or its state's page answered (undefined). */
async function pendingInvitation(env: InvitationEnv, res: Response, tenant: string, token: string) {
  const found = await findInvitation(env.deps.identity, tenant, token);
  if (found === undefined) sendState(env, res, tenant, 'unknown');
  else if (found.state !== 'pending')
    sendState(env, res, tenant, found.state === 'accepted' ? 'accepted-before' : found.state);
  else return found;
  return undefined;
}

/** A POST within its source's budget and with this browser's CSRF field: its form, or the refusal answered (undefined). */
async function admittedForm(env: InvitationEnv, req: Request, res: Response, tenant: string) {
  const over = await env.deps.budget.take(req.ip ?? '');
  if (over !== undefined) {
    res.setHeader('retry-after', String(over.retryAfterSeconds));
    send(env, res, 429, linkPausedPage(tenant, over.retryAfterSeconds));
    return undefined;
  }
  const form = readForm(req);
  const nonce = nonceOf(req);
  if (
    nonce === undefined ||
    !constantTimeEquals(form.csrf, csrfOf(env.deps.csrfKey, tenant, nonce))
  ) {
    send(env, res, 403, linkFormInvalidPage(tenant, signInOf(env, tenant)));
    return undefined;
  }
  return { ...form, nonce };
}

/**
 * GET: 1. the realm; 2. the pending invitation the link names; 3. "Set your password".
 */
async function show(env: InvitationEnv, req: Request, res: Response): Promise<void> {
  const tenant = await realmOf(env, req, res);
  if (tenant === undefined) return;
  const raw = req.query.token;
  const token = typeof raw === 'string' ? raw.slice(0, TOKEN_MAX) : '';
  const found = await pendingInvitation(env, res, tenant, token);
  if (found === undefined) return;
  send(env, res, 200, invitationFormPage(tenant, found.email, formFields(env, res, tenant, token)));
}

/**
 * POST: 1. the realm; 2. the source's budget, then the CSRF field (before any lookup);
 * 3. the pending invitation; 4. the password's own rules; 5. the acceptance (a hash on the
 * password checkers: busy is 429); 6. on to the sign-in page.
 */
async function accept(env: InvitationEnv, req: Request, res: Response): Promise<void> {
  const tenant = await realmOf(env, req, res);
  if (tenant === undefined) return;
  const form = await admittedForm(env, req, res, tenant);
  if (form === undefined) return;
  const found = await pendingInvitation(env, res, tenant, form.token);
  if (found === undefined) return;
  const problem = passwordProblem(form.password, form.confirm);
  const fields = formFields(env, res, tenant, form.token, form.nonce);
  if (problem !== undefined)
    return send(env, res, 400, invitationFormPage(tenant, found.email, fields, { error: problem }));
  const outcome = await acceptInvitation(env.deps, tenant, {
    token: form.token,
    password: form.password,
    address: req.ip ?? null,
    requestId: requestIdOf(req) ?? null,
  });
  if (outcome.kind === 'busy') {
    res.setHeader('retry-after', '1');
    return send(env, res, 429, invitationFormPage(tenant, found.email, fields, { error: BUSY }));
  }
  if (outcome.kind !== 'accepted') return sendState(env, res, tenant, outcome.kind);
  res.clearCookie(NONCE_COOKIE, { path: `/realms/${tenant}/invitation` });
  res.set(env.headers).redirect(303, signInOf(env, tenant).href);
}

export function invitationRoutes(deps: InvitationPageDeps): Route[] {
  const env: InvitationEnv = { deps, headers: pageHeaders(new URL(deps.portalUrl).origin) };
  const path = '/realms/:tenant/invitation';
  return [
    { method: 'GET', path, errors: ['page'], handlers: [(req, res) => show(env, req, res)] },
    {
      method: 'POST',
      path,
      errors: ['page'],
      input: {
        body: { type: 'form', fields: ['token', 'csrf', 'username', 'password', 'confirm'] },
      },
      handlers: [
        keepingRequestContext(
          express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 }),
        ),
        (req: Request, res: Response) => accept(env, req, res),
      ],
    },
  ];
}

function linkPausedPage(tenant: string, retryAfterSeconds: number): string {
  return linkStatePageWith(
    tenant,
    'Too many attempts',
    `Too many invitation attempts from this network. Try again in ${waitWording(retryAfterSeconds)}.`,
  );
}

function linkFormInvalidPage(tenant: string, signIn: { href: string }): string {
  return linkStatePageWith(
    tenant,
    'This form is not valid',
    'It was not sent from the page this browser opened. Open the invitation link again.',
    signIn,
  );
}

function linkStatePageWith(
  tenant: string,
  heading: string,
  message: string | Html,
  signIn?: { href: string },
): string {
  return page(
    heading,
    messageCard(heading, message, signIn && { href: signIn.href, text: 'Go to the sign-in page' }),
    tenant,
  );
}
