// signals: Shared Signals. (1) The time from a secret reset's API answer to the SET's arrival at
// a push receiver (an https endpoint on loopback, its self-signed certificate trusted by the
// token service through NODE_EXTRA_CA_CERTS: production refuses http push URLs), resets one
// after another; (2) client_credentials grants in a realm with a push stream configured against
// the same grants in a realm without one (grants never touch the queues: the ratio shows it).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measurePair, measureWindow } from '../lib/load.mjs';
import { createServiceAccount, grantBody, tokenPath } from '../lib/platform.mjs';
import { ratios } from '../lib/report.mjs';

export const name = 'signals';
export const what =
  'client_credentials grant in a realm with a Shared Signals push stream configured';
export const baselineWhat = 'the same grant in a realm without streams';
export const labels = ['with stream', 'no stream'];

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CREDENTIAL_CHANGE = 'https://schemas.openid.net/secevent/caep/event-type/credential-change';
/** Resets measured (quick: fewer); each waits for its SET before the next. */
const RESETS = { quick: 100, full: 500 };

/**
 * A self-signed certificate for 127.0.0.1, made once per bench run.
 * @type {{key: string, cert: string} | undefined}
 */
let certificate;
export function receiverCertificate() {
  if (certificate) return certificate;
  const dir = mkdtempSync(join(tmpdir(), 'bench-ssf-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  certificate = { key, cert };
  return certificate;
}

/** The token service's environment for this scenario: loopback push targets, the bench certificate trusted. */
export function serviceEnv() {
  return {
    'token-service': {
      FEDERATION_ALLOW_PRIVATE_ISSUERS: 'true',
      NODE_EXTRA_CA_CERTS: receiverCertificate().cert,
    },
  };
}

/** An https push receiver that notes when each SET arrives (before any parsing). */
export async function startReceiver() {
  const { key, cert } = receiverCertificate();
  /** @type {((at: number) => void)[]} */
  const waiting = [];
  /** @type {number[]} */
  const early = [];
  const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => {
      res.writeHead(202).end();
      const next = waiting.shift();
      if (next) next(at);
      else early.push(at);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `https://127.0.0.1:${port}/events`,
    /** @returns {Promise<number>} */
    next: () =>
      early.length > 0
        ? Promise.resolve(/** @type {number} */ (early.shift()))
        : new Promise((resolve) => waiting.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}

/** @param {number[]} sorted @param {number} q */
const quantile = (sorted, q) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

let measurements = 0;

/**
 * @param {{platform: import('../lib/platform.mjs').Platform, tenant: string, accounts: import('./index.mjs').ScenarioContext['accounts'], db: import('pg').Client,
 *   load: {connections: number, warmupSec: number, firstWarmupSec: number, durationSec: number, rounds: number}}} ctx
 */
export async function measure({ platform, tenant, accounts, db, load }) {
  // A realm of each measurement's own: a runtime comparison measures this twice on one database.
  measurements += 1;
  const realm = `${tenant}-ssf${measurements}`;
  await platform.createTenant('bench', realm);
  const writer = await createServiceAccount(platform, realm, 'bench-writer', 'Edit');
  const target = await createServiceAccount(platform, realm, 'bench-target', 'View');
  const receiverAccount = await createServiceAccount(platform, realm, 'bench-receiver', 'View');
  await platform.updateServiceAccount(realm, receiverAccount.client_id, { receive_signals: true });
  const token = await platform.grantToken(
    realm,
    { clientId: receiverAccount.client_id, secret: receiverAccount.secret },
    { scope: 'ssf.manage' },
  );
  const receiver = await startReceiver();
  try {
    const created = await fetch(`${platform.tokenService.url}/realms/${realm}/ssf/streams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: receiver.url },
        events_requested: [CREDENTIAL_CHANGE],
      }),
    });
    if (created.status !== 201)
      throw new Error(
        `signals: stream creation answered ${created.status}: ${await created.text()}`,
      );

    const resets = load.rounds > 1 ? RESETS.full : RESETS.quick;
    /** @type {number[]} */
    const latencies = [];
    for (let i = 0; i < resets; i += 1) {
      const arrival = receiver.next();
      await platform.resetSecret(realm, target.client_id);
      const answered = performance.now();
      // The SET may arrive before the reset's answer has been read: that counts as 0.
      latencies.push(Math.max(0, (await arrival) - answered));
    }
    latencies.sort((a, b) => a - b);

    const grant = (
      /** @type {string} */ realmName,
      /** @type {{client_id: string, secret: string}} */ account,
    ) => ({
      spec: {
        url: platform.tokenService.url,
        method: 'POST',
        path: tokenPath(realmName),
        headers: FORM,
        body: grantBody(account.client_id, account.secret),
      },
      pids: [platform.tokenService.pid],
      dbApp: 'token-service',
    });
    // The stream's realm is new and the resets above churned the process: an unmeasured window
    // on it first, so the pair compares warm sides (without it the first window ran at a fraction
    // of the second's rate, whichever realm it served).
    await measureWindow(grant(realm, writer), { ...load, warmupSec: 0 }, db);
    const pair = await measurePair(
      { ours: grant(realm, writer), baseline: grant(tenant, accounts.writer) },
      load,
      db,
    );
    return {
      scenario: name,
      what,
      baselineWhat,
      labels,
      ...pair,
      ratio: ratios(pair),
      delivery: {
        resets,
        p50Ms: quantile(latencies, 0.5),
        p99Ms: quantile(latencies, 0.99),
        maxMs: latencies.at(-1),
      },
    };
  } finally {
    await receiver.close();
  }
}
