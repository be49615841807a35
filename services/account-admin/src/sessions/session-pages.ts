/** Settings → Sessions: the signed-in person's portal sessions, each of which they may end. */
import { html, type Html } from '@plant/shared/page-look';
import type { Session, SessionView } from './portal-sessions.js';
import { ASSETS_PATH, confirmDialog, layout, timeOf } from '../portal/index.js';

const BROWSERS: Array<[RegExp, string]> = [
  [/Edg\/(\d+)/, 'Edge'],
  [/OPR\/(\d+)/, 'Opera'],
  [/Firefox\/(\d+)/, 'Firefox'],
  [/(?:Chrome|Chromium)\/(\d+)/, 'Chrome'],
  [/Version\/(\d+).*Safari\//, 'Safari'],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/Android/, 'Android'],
  [/iPhone|iPad/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** "Chrome 131 on Linux" from a User-Agent; the header itself when it names no browser we know. */
export function browserName(userAgent: string | null): string {
  if (userAgent === null) return 'Unknown browser';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent));
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (browser === undefined) return userAgent.slice(0, 60);
  const version = browser[0].exec(userAgent)?.[1];
  return `${browser[1]}${version ? ` ${version}` : ''}${system ? ` on ${system}` : ''}`;
}

function sessionRow(s: SessionView): Html {
  const name = browserName(s.browser);
  return html`<tr data-session-id="${s.id}" data-current="${String(s.current)}">
  <th scope="row" data-label="Browser">${name}${s.current ? html` <span class="badge">This session</span>` : ''}</th>
  <td data-label="Address">${s.address !== null && s.address !== undefined ? html`<span class="token">${s.address}</span>` : html`<span class="muted">Unknown</span>`}</td>
  <td data-label="Started">${timeOf(s.started_at)}</td>
  <td data-label="Last seen">${timeOf(s.last_seen_at)}</td>
  <td class="actions" data-label="Actions"><div class="action-buttons">
    <button type="button" class="button button-small button-danger" data-action="end-session" aria-label="${s.current ? 'Sign out of this session' : `End the session of ${name} started ${s.started_at.slice(0, 16).replace('T', ' ')} UTC`}">${s.current ? 'Sign out' : 'End'}</button>
  </div></td>
</tr>`;
}

export function sessionsPage({
  session,
  sessions,
}: {
  session: Session;
  sessions: SessionView[];
}): string {
  return layout({
    title: 'Sessions',
    session,
    active: 'sessions',
    scripts: [`${ASSETS_PATH}/sessions.js`],
    body: html`<p class="breadcrumb">Settings</p>
<div class="page-head"><div><h1>Sessions</h1><p class="muted">Where you are signed in to this portal. End any session you do not recognise: its next request is signed out.</p></div></div>
<div id="page-status" role="status" aria-live="polite" class="sr-only"></div>
<div class="table-wrap"><table class="table" id="sessions">
  <caption class="sr-only">Your sessions</caption>
  <thead><tr><th scope="col">Browser</th><th scope="col">Address</th><th scope="col">Started</th><th scope="col">Last seen</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${sessions.map(sessionRow)}</tbody>
</table></div>
${confirmDialog}`,
  });
}
