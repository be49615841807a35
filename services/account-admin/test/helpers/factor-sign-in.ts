/**
 * A browser's way through the realm's sign-in pages over HTTP (the jar of browser-client.ts):
 * the password form, the enrolment page (an authenticator app, its codes computed here with
 * otpauth, RFC 6238), the code page, the recovery codes shown once, until the portal. Each
 * page is recognised by its form, so a test can stop at the first page it did not expect.
 */
import { Secret, TOTP } from 'otpauth';
import { type CookieJar, follow, send, submitSignInForm, type TestUser } from './browser-client.js';

/** The realm page a browser was shown, by the form it holds. */
export type RealmPage = 'password' | 'enrol' | 'factor' | 'codes' | 'other';

export function realmPageOf(html: string): RealmPage {
  if (/name="password"/.test(html)) return 'password';
  if (/id="totp-secret"/.test(html)) return 'enrol';
  if (/action="[^"]*\/factor"/.test(html)) return 'factor';
  if (/action="[^"]*\/continue"/.test(html)) return 'codes';
  return 'other';
}

/** The current code of an authenticator app holding `secret` (base32). */
export function totpCode(secret: string): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate();
}

export interface Landing {
  /** Where the browser stopped: the portal (signed in), or a realm page it was not told to pass. */
  at: 'portal' | RealmPage;
  status: number;
  url: string;
  html: string;
  /** The authenticator-app secret enrolled on the way, if one was. */
  secret?: string;
  /** Which realm pages were passed, in order. */
  passed: RealmPage[];
}

export interface Way {
  /** The password form is filled with this person's; without it the browser stops there. */
  user?: TestUser;
  /** An enrolment is completed with a new authenticator app; without it the browser stops there. */
  enrol?: boolean;
  /** The code page is answered from this secret; without it the browser stops there. */
  secret?: string;
}

/** What a form post led to: an address to follow, or a page answered in place (the recovery codes). */
type Next = { follow: string } | { status: number; html: string; url: string };

async function postForm(
  jar: CookieJar,
  pageUrl: string,
  html: string,
  step: string,
  fields: Record<string, string>,
): Promise<Next> {
  const action = new RegExp(`action="([^"]*/${step})"`).exec(html)?.[1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !csrf) throw new Error(`no ${step} form at ${pageUrl}:\n${html.slice(0, 400)}`);
  const res = await send(jar, new URL(action.replace(/&amp;/g, '&'), pageUrl).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: csrf.replace(/&amp;/g, '&'), ...fields }).toString(),
  });
  const location = res.headers.get('location');
  if (location !== null) return { follow: new URL(location, pageUrl).href };
  return { status: res.status, html: await res.text(), url: pageUrl };
}

/** Follows `start` in `jar` through the realm's pages `way` allows, until the portal or the first other page. */
export async function walk(
  jar: CookieJar,
  portalUrl: string,
  start: string,
  way: Way = {},
): Promise<Landing> {
  const passed: RealmPage[] = [];
  let secret: string | undefined;
  let next: Next = { follow: start };
  for (let pages = 0; pages < 8; pages += 1) {
    let shown: { status: number; html: string; url: string };
    if ('follow' in next) {
      const { res, url } = await follow(jar, next.follow);
      shown = { status: res.status, html: await res.text(), url };
    } else shown = next;
    const { status, html, url } = shown;
    const stop = (at: Landing['at']): Landing => ({
      at,
      status,
      url,
      html,
      ...(secret === undefined ? {} : { secret }),
      passed,
    });
    if (url.startsWith(portalUrl)) return stop('portal');
    const page = realmPageOf(html);
    if (page === 'password' && way.user)
      next = { follow: await submitSignInForm(jar, url, html, way.user) };
    else if (page === 'enrol' && way.enrol) {
      secret = /id="totp-secret" type="text" readonly value="([A-Z2-7]+)"/.exec(html)?.[1];
      next = await postForm(jar, url, html, 'enrol-totp', { code: totpCode(secret!) });
    } else if (page === 'factor' && way.secret)
      next = await postForm(jar, url, html, 'factor', { code: totpCode(way.secret) });
    else if (page === 'codes') next = await postForm(jar, url, html, 'continue', {});
    else return stop(page);
    passed.push(page);
  }
  throw new Error(`too many realm pages from ${start}`);
}
