/**
 * The sign-in pages' only scripts, served by this service (`script-src 'self'`): the
 * @simplewebauthn/browser bundle, and the few lines that run a passkey ceremony for a form
 * marked `data-passkey` (its options in `data-options`, written by the server): the browser's
 * answer goes into the form's `response` field and the form is posted as any other.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Request, Response } from 'express';
import type { Route } from '@plant/shared/http';
import { SIGN_IN_ASSETS } from '../oidc/index.js';

export const WEBAUTHN_BROWSER_SCRIPT = `${SIGN_IN_ASSETS}/simplewebauthn-browser.js`;
export const PASSKEY_SCRIPT = `${SIGN_IN_ASSETS}/passkey.js`;
export const PASSKEY_SCRIPTS = [WEBAUTHN_BROWSER_SCRIPT, PASSKEY_SCRIPT];

const PASSKEY_SOURCE = `const { startRegistration, startAuthentication, browserSupportsWebAuthn } = globalThis.SimpleWebAuthnBrowser;
for (const form of document.querySelectorAll('form[data-passkey]')) {
  const status = form.querySelector('[data-passkey-status]');
  const tell = (text) => { status.textContent = text; status.hidden = false; };
  if (!browserSupportsWebAuthn()) {
    form.querySelector('button').disabled = true;
    tell('This browser cannot use passkeys.');
    continue;
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const optionsJSON = JSON.parse(form.dataset.options);
    try {
      const response = form.dataset.passkey === 'register'
        ? await startRegistration({ optionsJSON })
        : await startAuthentication({ optionsJSON });
      form.elements.response.value = JSON.stringify(response);
      form.submit();
    } catch (err) {
      tell(err && err.name === 'NotAllowedError'
        ? 'The passkey was not used (cancelled or timed out). Try again.'
        : 'The passkey could not be used. Try again, or use another way.');
    }
  });
}
`;

/** The bundle's path: the package exports only its entry points, so it is found beside its CommonJS build. */
function bundlePath(): string {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js');
}

function scriptRoute(path: string, source: () => string): Route {
  let bytes: string | undefined;
  return {
    method: 'GET',
    path,
    handlers: [
      function sendScript(_req: Request, res: Response): void {
        bytes ??= source();
        res.setHeader('cache-control', 'public, max-age=3600');
        res.setHeader('x-content-type-options', 'nosniff');
        res.type('text/javascript').send(bytes);
      },
    ],
  };
}

export function passkeyScriptRoutes(): Route[] {
  return [
    scriptRoute(WEBAUTHN_BROWSER_SCRIPT, () => readFileSync(bundlePath(), 'utf8')),
    scriptRoute(PASSKEY_SCRIPT, () => PASSKEY_SOURCE),
  ];
}
