// signin-passkey: whole sign-ins with a passkey and no password (authorization request →
// "Use a passkey": an assertion signed by a software authenticator → code exchange), next to
// the same sign-ins with a password alone.
import {
  enrolledPerson,
  factorTenant,
  measureSignIns,
  passwordPerson,
  signIns,
} from '../lib/sign-in-runs.mjs';

export const name = 'signin-passkey';
export const what =
  'whole portal sign-ins with a passkey alone (P-256, software authenticator), 2 clients';
export const baselineWhat = 'the same sign-ins with a password alone';
export const labels = ['passkey', 'password'];

const SIGN_INS = 32;
const CLIENTS = 2;

/** Nothing to check before: the measurement fails on the first sign-in that does not complete. */
export async function check() {}

/** @param {{platform: any}} ctx */
export async function measure({ platform }) {
  const t = await factorTenant(platform, 'bench-passkey');
  const holder = await enrolledPerson(platform, t, 'passkey');
  const plain = await passwordPerson(platform, t);
  const run = signIns(t);
  const baseline = await measureSignIns(run.password, Array(SIGN_INS).fill(plain), CLIENTS);
  const ours = await measureSignIns(run.passkey, Array(SIGN_INS).fill(holder), CLIENTS);
  if (ours.errors > 0 || baseline.errors > 0)
    throw new Error(
      `signin-passkey: ${ours.errors} passkey and ${baseline.errors} password sign-ins failed: ${ours.firstError ?? baseline.firstError}`,
    );
  return {
    scenario: name,
    what,
    baselineWhat,
    labels,
    ours,
    baseline,
    // One burst each: no rounds of alternating windows.
    rounds: [],
    ratio: { rps: ours.rps / baseline.rps, cpuPerRequest: null },
  };
}
