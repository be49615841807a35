// signin-code: whole sign-ins (authorization request → password → authenticator code → code
// exchange) by people who hold an authenticator app, next to the same sign-ins with a password
// alone. A code works once per 30 s step and person, so each of PEOPLE signs in once.
import {
  enrolledPerson,
  factorTenant,
  measureSignIns,
  nextCodeStep,
  passwordPerson,
  signIns,
} from '../lib/sign-in-runs.mjs';

export const name = 'signin-code';
export const what =
  'whole portal sign-ins with password + authenticator code (each person once), 2 clients';
export const baselineWhat = 'the same sign-ins with a password alone';
export const labels = ['password + code', 'password'];

const PEOPLE = 16;
const CLIENTS = 2;

/** Nothing to check before: the measurement fails on the first sign-in that does not complete. */
export async function check() {}

/** @param {{platform: any, load: {quick?: boolean}}} ctx */
export async function measure({ platform }) {
  const t = await factorTenant(platform, 'bench-code');
  /** @type {Awaited<ReturnType<typeof enrolledPerson>>[]} */
  const people = [];
  for (let i = 0; i < PEOPLE; i += 1) people.push(await enrolledPerson(platform, t, 'totp'));
  const plain = await passwordPerson(platform, t);
  const run = signIns(t);
  const baseline = await measureSignIns(run.password, Array(PEOPLE).fill(plain), CLIENTS);
  // The enrolments spent this step's code of every person.
  await nextCodeStep();
  const ours = await measureSignIns(run.code, people, CLIENTS);
  if (ours.errors > 0 || baseline.errors > 0)
    throw new Error(
      `signin-code: ${ours.errors} code and ${baseline.errors} password sign-ins failed: ${ours.firstError ?? baseline.firstError}`,
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
