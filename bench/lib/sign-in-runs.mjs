// Whole realm sign-ins as the portal's users make them, one after another on a few clients,
// for the sign-in scenarios (signin-code, signin-passkey): password alone, password and an
// authenticator code, a passkey alone. Each sign-in is a new browser from a loopback address
// of its own (sign-ins started are budgeted per address), from the authorization request to
// the code exchange.
import { randomInt } from 'node:crypto';
import {
  browser,
  csrfOf,
  exchange,
  passkeyOptions,
  post,
  postPassword,
  softwarePasskey,
  start,
  totpCode,
  totpKeyOf,
} from './realm-browser.mjs';

const PASSWORD = 'bench people password';
/** The second octet of this run's source addresses (counters of an earlier run may linger in Redis). */
const NET = randomInt(2, 250);
let nextAddress = 0;
const address = () => {
  nextAddress += 1;
  return `127.${NET}.${(nextAddress >> 8) & 255}.${nextAddress & 255 || 1}`;
};

/**
 * @typedef {import('./realm-browser.mjs').RealmTarget} RealmTarget
 * @typedef {{email: string, totpKey?: string, passkey?: ReturnType<typeof softwarePasskey>}} Person
 * @typedef {(person: Person) => Promise<void>} SignIn
 */

/** A tenant whose Account Admins must hold a factor, on the bench platform. */
export async function factorTenant(/** @type {any} */ platform, /** @type {string} */ prefix) {
  const tenant = await platform.createTenant(prefix);
  await platform.cli('tenant', 'policy', tenant, '--admin-factor', 'required');
  /** @type {RealmTarget} */
  const target = {
    url: platform.tokenService.url,
    tenant,
    redirectUri: `${platform.portalUrl}/auth/callback`,
  };
  return target;
}

/** A new Account Admin of the tenant (its first sign-in enrols `factor`). */
export async function enrolledPerson(
  /** @type {any} */ platform,
  /** @type {RealmTarget} */ t,
  /** @type {'totp' | 'passkey'} */ factor,
) {
  const email = await platform
    .cli(
      'user',
      'create',
      t.tenant,
      '--email',
      `${factor}-${randomInt(1e9)}@bench.test`,
      '--password',
      PASSWORD,
      '--role',
      'Account Admin',
    )
    .then((/** @type {unknown} */ out) => /** @type {{user: {email: string}}} */ (out).user.email);
  const from = address();
  const b = browser(from);
  const { verifier, page, path } = await start(b, t);
  const enrol = await postPassword(b, t, path, {
    csrf: csrfOf(page.text),
    email,
    password: PASSWORD,
  });
  /** @type {Person} */
  const person = { email };
  let end;
  if (factor === 'passkey') {
    person.passkey = softwarePasskey();
    const response = person.passkey.register(passkeyOptions(enrol.text, 'register'));
    end = await post(b, t, `${path}/enrol-passkey`, {
      csrf: csrfOf(enrol.text),
      response: JSON.stringify(response),
    });
  } else {
    person.totpKey = totpKeyOf(enrol.text);
    const codes = await post(b, t, `${path}/enrol-totp`, {
      csrf: csrfOf(enrol.text),
      code: totpCode(person.totpKey),
    });
    end = await post(b, t, `${path}/continue`, { csrf: csrfOf(codes.text) });
  }
  await exchange(t, end, verifier, from);
  return person;
}

/** A person with a password only (their realm's policy off, or not an Account Admin). */
export async function passwordPerson(/** @type {any} */ platform, /** @type {RealmTarget} */ t) {
  const out = /** @type {{user: {email: string}}} */ (
    await platform.cli(
      'user',
      'create',
      t.tenant,
      '--email',
      `pwd-${randomInt(1e9)}@bench.test`,
      '--password',
      PASSWORD,
      '--role',
      'View',
    )
  );
  return { email: out.user.email };
}

/** @param {RealmTarget} t @returns {Record<'password' | 'code' | 'passkey', SignIn>} */
export function signIns(t) {
  return {
    async password(person) {
      const from = address();
      const b = browser(from);
      const { verifier, page, path } = await start(b, t);
      const end = await postPassword(b, t, path, {
        csrf: csrfOf(page.text),
        email: person.email,
        password: PASSWORD,
      });
      await exchange(t, end, verifier, from);
    },
    async code(person) {
      const from = address();
      const b = browser(from);
      const { verifier, page, path } = await start(b, t);
      const factor = await postPassword(b, t, path, {
        csrf: csrfOf(page.text),
        email: person.email,
        password: PASSWORD,
      });
      const end = await post(b, t, `${path}/factor`, {
        csrf: csrfOf(factor.text),
        code: totpCode(/** @type {string} */ (person.totpKey)),
      });
      await exchange(t, end, verifier, from);
    },
    async passkey(person) {
      const from = address();
      const b = browser(from);
      const { verifier, page, path } = await start(b, t);
      const response = /** @type {NonNullable<Person['passkey']>} */ (person.passkey).assert(
        passkeyOptions(page.text, 'authenticate'),
      );
      const end = await post(b, t, `${path}/passkey`, {
        csrf: csrfOf(page.text),
        response: JSON.stringify(response),
      });
      await exchange(t, end, verifier, from);
    },
  };
}

/** Waits for the next 30 s step: an authenticator code works once per step and person. */
export async function nextCodeStep() {
  const step = Math.floor(Date.now() / 30_000);
  while (Math.floor(Date.now() / 30_000) === step) await new Promise((r) => setTimeout(r, 200));
}

const percentile = (/** @type {number[]} */ sorted, /** @type {number} */ p) =>
  sorted.length === 0
    ? null
    : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/**
 * `people.length` sign-ins (each person once, in order) on `clients` clients: sign-ins per
 * second and their latency, in the load scenarios' shape (no CPU figures).
 * @param {SignIn} signIn @param {Person[]} people @param {number} clients
 */
export async function measureSignIns(signIn, people, clients) {
  /** @type {number[]} */
  const took = [];
  let errors = 0;
  /** @type {string | undefined} */
  let firstError;
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < people.length) {
        const person = people[next++];
        const t0 = performance.now();
        try {
          await signIn(person);
          took.push(performance.now() - t0);
        } catch (err) {
          errors += 1;
          firstError ??= /** @type {Error} */ (err).message;
        }
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  took.sort((a, b) => a - b);
  return {
    requests: people.length,
    rps: took.length / seconds,
    p50Ms: percentile(took, 50),
    p99Ms: percentile(took, 99),
    errors,
    firstError,
    cpuUsPerReq: null,
    mainCpuUsPerReq: null,
    dbCpuUsPerReq: null,
  };
}
