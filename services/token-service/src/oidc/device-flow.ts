/**
 * plantctl's sign-in: the OAuth 2.0 Device Authorization Grant (RFC 8628) at each realm, and a
 * loopback redirect with PKCE (RFC 8252) for `--browser`, for the realm's static public client
 * `plantctl` (docs/device-flow.md). The person approves on the realm's device page: they enter
 * the code, see which device asks (client, address, time) and confirm, then sign in with the
 * realm's own sign-in steps (password and second factor, or a passkey), fresh whatever session
 * the browser has (sign-in-policy.ts).
 *
 * Two kinds of request here cost something before anyone signs in, and each takes a point from
 * a `SourceBudget` (per source and in total, shared by the replicas) before oidc-provider reads
 * it: a device authorization request stores a device code (for DEVICE_CODE_TTL_SECONDS), and a
 * code entered on the device page is a guess at a live user code. So the device codes alive at
 * any time are bounded by the first budget over a code's lifetime, and a guesser gets a fixed
 * number of tries per window: with at most `total` live codes among 20^8 user codes, each try
 * finds one with a chance of `total / 2.56e10`.
 */
import { PLANTCTL_CLIENT_ID } from '@plant/shared/api';
import { html, Html } from '@plant/shared/page-look';
import type { SourceBudget } from '@plant/shared/security';
import type { ClientMetadata, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { ProviderContext } from './oidc-provider-internals.js';
import { page, setPageHeaders } from './provider-pages.js';

/** How long a device code (and its user code) can be approved and redeemed. */
export const DEVICE_CODE_TTL_SECONDS = 600;

/**
 * The CLI's client in every realm: public (no secret: it runs on people's machines), a native
 * application so any loopback port of its redirect URIs is accepted (RFC 8252 §7.3), asking
 * for a refresh token (`offline_access`) that oidc-provider binds to the DPoP key of the
 * request that got it, as it does for every public client (RFC 9449 §5).
 */
export const PLANTCTL_CLIENT: ClientMetadata = {
  client_id: PLANTCTL_CLIENT_ID,
  client_name: 'plantctl',
  application_type: 'native',
  token_endpoint_auth_method: 'none',
  grant_types: [
    'urn:ietf:params:oauth:grant-type:device_code',
    'authorization_code',
    'refresh_token',
  ],
  response_types: ['code'],
  redirect_uris: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
  scope: 'openid email profile offline_access plants:read plants:write',
};

/** The paths under a realm (as oidc-provider routes them, realm-configuration.ts) the budgets guard. */
const DEVICE_AUTHORIZATION_PATH = /^\/protocol\/openid-connect\/auth\/device\/?$/i;
const CODE_VERIFICATION_PATH = /^\/device\/?$/i;

export const TOO_MANY_DEVICE_CODES =
  'too many device sign-ins were started from this network; try again later';
export const TOO_MANY_CODE_ENTRIES =
  'too many codes were entered from this network; wait, then enter the code shown on your device';

export interface DeviceFlowBudgets {
  /** Device authorization requests (each stores a device code), per source and in total. */
  deviceCodes: SourceBudget;
  /** Codes entered on a realm's device page (each a lookup of a user code), per source and in total. */
  codeEntries: SourceBudget;
}

/** Takes a point of the right budget before oidc-provider reads the request; over it, 429 with Retry-After. */
export function guardDeviceFlow(budgets: DeviceFlowBudgets, tenant: string) {
  return async function guardDeviceRequest(
    ctx: ProviderContext,
    next: () => Promise<unknown>,
  ): Promise<void> {
    if (ctx.method !== 'POST') return void (await next());
    if (DEVICE_AUTHORIZATION_PATH.test(ctx.path)) {
      const over = await budgets.deviceCodes.take(ctx.ip);
      if (over === undefined) return void (await next());
      ctx.status = 429;
      ctx.set('Retry-After', String(over.retryAfterSeconds));
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'slow_down', error_description: TOO_MANY_DEVICE_CODES };
      return;
    }
    if (CODE_VERIFICATION_PATH.test(ctx.path)) {
      const over = await budgets.codeEntries.take(ctx.ip);
      if (over === undefined) return void (await next());
      ctx.status = 429;
      ctx.set('Retry-After', String(over.retryAfterSeconds));
      renderCodeEntry(ctx as unknown as KoaContextWithOIDC, tenant, TOO_MANY_CODE_ENTRIES, false);
      return;
    }
    await next();
  };
}

function tenantOf(ctx: KoaContextWithOIDC): string | undefined {
  return (ctx.oidc?.provider as unknown as { pageContext?: { tenant: string } } | undefined)
    ?.pageContext?.tenant;
}

/**
 * The device page's form: our own rather than oidc-provider's (its inline `onfocus` handler is
 * refused by the page's CSP), posting the same fields to the same action. The user code is
 * never echoed back (it is a bearer value until the device redeems it).
 */
function renderCodeEntry(
  ctx: KoaContextWithOIDC,
  tenant: string | undefined,
  message: string | undefined,
  withForm = true,
): void {
  setPageHeaders(ctx);
  const action = `${tenant === undefined ? '' : `/realms/${tenant}`}/device`;
  const xsrf = ctx.oidc?.session?.state?.secret;
  const form =
    withForm && typeof xsrf === 'string'
      ? html`<form method="post" action="${action}" class="stack" autocomplete="off">
    <input type="hidden" name="xsrf" value="${xsrf}">
    <label for="user_code">Code</label>
    <input id="user_code" name="user_code" type="text" required maxlength="16" autocapitalize="characters" spellcheck="false" autofocus${message === undefined ? '' : html` aria-invalid="true" aria-describedby="device-error"`}>
    <button type="submit" class="button button-primary">Continue</button>
  </form>`
      : '';
  ctx.body = page(
    'Sign in a device',
    html`<section class="card narrow">
  <h1>Sign in a device</h1>
  <p class="muted">Enter the code your device shows to let it act for you in the Plant Store tenant${tenant === undefined ? '' : html` <strong>${tenant}</strong>`}.</p>
  ${message === undefined ? '' : html`<p id="device-error" class="alert alert-error" role="alert">${message}</p>`}
  ${form}
</section>`,
    tenant,
  );
}

/** What a refused code entry says: never which codes exist (not found and used read alike). */
function entryMessage(err: (Error & { name?: string }) | undefined): string | undefined {
  if (err === undefined) return undefined;
  switch (err.name) {
    case 'NoCodeError':
      return 'Enter the code your device shows.';
    case 'AbortedError':
      return 'The device sign-in was cancelled. Start it again on your device.';
    case 'ExpiredError':
    case 'NotFoundError':
    case 'AlreadyUsedError':
      return 'That code is not valid, expired or was already used. Check the code on your device, or start again there.';
    default:
      return 'The device sign-in could not continue. Start it again on your device.';
  }
}

const userCodeInputSource: NonNullable<
  NonNullable<Configuration['features']>['deviceFlow']
>['userCodeInputSource'] = async (ctx, _form, _out, err) => {
  renderCodeEntry(ctx, tenantOf(ctx), entryMessage(err as Error | undefined));
};

/**
 * Before anyone signs in, the person sees who asks: the client, the address and program the
 * request came from and when, and the code to compare with the device's. Then "Approve"
 * (oidc-provider's confirm form: the sign-in follows) or "Deny" (its abort: the device is told
 * access_denied).
 */
const userCodeConfirmSource: NonNullable<
  NonNullable<Configuration['features']>['deviceFlow']
>['userCodeConfirmSource'] = async (ctx, form, client, deviceInfo, userCode) => {
  const tenant = tenantOf(ctx);
  setPageHeaders(ctx);
  const info = (deviceInfo ?? {}) as { ip?: string; ua?: string };
  const issuedAt = ctx.oidc.entities.DeviceCode?.iat;
  const when = typeof issuedAt === 'number' ? new Date(issuedAt * 1000).toISOString() : undefined;
  ctx.body = page(
    'Approve a device',
    html`<section class="card narrow">
  <h1>Approve this device?</h1>
  <p class="muted">It asks to act for you in the Plant Store tenant${tenant === undefined ? '' : html` <strong>${tenant}</strong>`}, with everything your role allows.</p>
  <dl class="details">
    <dt>Client</dt><dd>${client.clientName ?? client.clientId}</dd>
    <dt>Address</dt><dd>${info.ip ?? 'unknown'}</dd>
    <dt>Program</dt><dd>${info.ua ?? 'unknown'}</dd>
    ${when === undefined ? '' : html`<dt>Asked at</dt><dd><time datetime="${when}">${when.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time></dd>`}
    <dt>Code</dt><dd><code>${userCode}</code></dd>
  </dl>
  <p>Approve only if you started this sign-in yourself and your device shows this code. You sign in next.</p>
  ${new Html(form)}
  <div class="button-row">
    <button autofocus type="submit" form="op.deviceConfirmForm" class="button button-primary">Approve and sign in</button>
    <button type="submit" form="op.deviceConfirmForm" value="yes" name="abort" class="button">Deny</button>
  </div>
</section>`,
    tenant,
  );
};

const successSource: NonNullable<
  NonNullable<Configuration['features']>['deviceFlow']
>['successSource'] = async (ctx) => {
  const tenant = tenantOf(ctx);
  setPageHeaders(ctx);
  ctx.body = page(
    'Device approved',
    html`<section class="card narrow">
  <h1>Device approved</h1>
  <p>${ctx.oidc.client?.clientName ?? 'Your device'} is signed in as you. You can close this page and go back to it.</p>
</section>`,
    tenant,
  );
};

/** oidc-provider's device flow as the realms use it: its base-20 codes (no vowels, no look-alikes), our pages. */
export function deviceFlowFeature(): NonNullable<Configuration['features']>['deviceFlow'] {
  return {
    enabled: true,
    charset: 'base-20',
    mask: '****-****',
    userCodeInputSource,
    userCodeConfirmSource,
    successSource,
  };
}
