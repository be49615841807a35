import { isTenantName } from '@plant/shared/api';
import { createHmac } from 'node:crypto';
import { isDatabaseUnavailable } from '@plant/shared/db';
import type { Html } from '@plant/shared/page-look';
import { constantTimeEquals } from '@plant/shared/security';
import type { Request, Response } from 'express';
import type Provider from 'oidc-provider';
import { unknownRealmPage, type RealmProviders } from '../oidc/index.js';
import { interactionPages, rememberRedirectOrigin } from './interaction-pages.js';

export type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** A sign-in's interaction, read for this request (its cookie and its uid agree). */
export interface LoadedInteraction {
  tenant: string;
  uid: string;
  provider: Provider;
  details: Interaction;
}

/**
 * What every sign-in page and form of a realm shares: loading the interaction, the CSRF field,
 * the page answers. A form is bound to its interaction: the uid is in the URL and in a signed,
 * SameSite=Lax, path-scoped cookie set by oidc-provider, and the form carries a token derived
 * from the uid with a server key. A cross-site POST lacks the cookie and the token.
 */
export interface InteractionKit {
  csrfFor(tenant: string, uid: string): string;
  csrfValid(req: Request): boolean;
  sendPage(res: Response, status: number, body: string): void;
  /**
   * A 429 page that runs no script, written straight to the socket: the page headers, its
   * `Retry-After`, no ETag (nothing stored may be revalidated) and nothing else of express's
   * send to pay for, since a storm's answers are mostly these.
   */
  sendRefusalPage(res: Response, retryAfterSeconds: number, body: string): void;
  sendEnd(res: Response, status: number, tenant: string, heading: string, message: string): void;
  sendInvalidForm(res: Response, tenant: string): void;
  load(req: Request, res: Response): Promise<LoadedInteraction | undefined>;
  /** A POST's interaction: its CSRF field valid and the sign-in still asking who it is; otherwise answered. */
  loadPost(req: Request, res: Response): Promise<LoadedInteraction | undefined>;
  /** The password form again (a passkey sign-in from it failed). */
  sendSignInForm(
    res: Response,
    loaded: LoadedInteraction,
    status: number,
    error: string | Html,
  ): Promise<void>;
}

export interface KitDeps {
  providers: RealmProviders;
  csrfKey: string;
  portalUrl: string;
  /** Renders the password form of `loaded` (interaction-routes.ts). */
  signInForm(loaded: LoadedInteraction, error: string | Html): Promise<string>;
}

/** The answers of a sign-in page (interaction-pages.ts), with the way to start again on the portal. */
export type PageAnswers = Pick<
  InteractionKit,
  'sendPage' | 'sendRefusalPage' | 'sendEnd' | 'sendInvalidForm'
>;

export function interactionKit(deps: KitDeps): InteractionKit {
  const pages = interactionPages(deps.portalUrl);
  const { sendPage, sendEnd, sendInvalidForm } = pages;

  const csrfFor = (tenant: string, uid: string) =>
    createHmac('sha256', deps.csrfKey).update(`sign-in:${tenant}:${uid}`).digest('base64url');

  function csrfValid(req: Request): boolean {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const expected = csrfFor(String(req.params.tenant), String(req.params.uid));
    return typeof body.csrf === 'string' && constantTimeEquals(body.csrf, expected);
  }

  async function load(req: Request, res: Response): Promise<LoadedInteraction | undefined> {
    const tenant = String(req.params.tenant);
    const uid = String(req.params.uid);
    const provider = isTenantName(tenant) ? await deps.providers.providerFor(tenant) : undefined;
    if (!provider) {
      sendPage(res, 404, unknownRealmPage(tenant, deps.portalUrl));
      return undefined;
    }
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.uid !== uid) throw new Error('interaction mismatch');
      rememberRedirectOrigin(res, details.params.redirect_uri);
      return { tenant, uid, provider, details };
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      sendEnd(
        res,
        400,
        tenant,
        'This sign-in has expired',
        'A sign-in page works for a few minutes, and only in the browser that opened it. Start a new sign-in.',
      );
      return undefined;
    }
  }

  async function loadPost(req: Request, res: Response): Promise<LoadedInteraction | undefined> {
    const loaded = await load(req, res);
    if (!loaded) return undefined;
    if (!csrfValid(req) || loaded.details.prompt.name !== 'login') {
      sendInvalidForm(res, loaded.tenant);
      return undefined;
    }
    return loaded;
  }

  async function sendSignInForm(
    res: Response,
    loaded: LoadedInteraction,
    status: number,
    error: string | Html,
  ): Promise<void> {
    sendPage(res, status, await deps.signInForm(loaded, error));
  }

  return { csrfFor, csrfValid, ...pages, load, loadPost, sendSignInForm };
}
