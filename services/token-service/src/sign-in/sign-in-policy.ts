/**
 * Whether an authorization asks who the person is although the realm's session knows: the
 * step-up requirement. oidc-provider's own login checks (no session, `max_age`, `prompt=login`,
 * …) run first, then ours, in this order:
 * 1. `plant_action`: the portal asks for an enrolment;
 * 2. `factor_acr`: the portal asks for a second factor (`acr_values` naming FACTOR_ACR) the
 *    session's sign-in did not verify (the portal's step-up also sends `max_age=0`, which
 *    oidc-provider's own `max_age` check answers);
 * 3. `admin_factor`: the session names an Account Admin without a factor where the policy
 *    requires one (promoted, or the policy switched on, since that session began): every
 *    sign-in of theirs enrols first, a silent one too (`prompt=none` is answered
 *    `login_required`);
 * 4. `plantctl_sign_in`: plantctl's sign-ins (a device grant's approval, its loopback
 *    redirect: oidc/device-flow.ts) sign in afresh.
 * oidc-provider's `native_client_prompt` (a consent prompt for every native client) is taken out:
 * these pages never ask consent (sign-in-page-flow.ts), and what it guards against, another
 * program on the machine posing as plantctl and taking the browser's session silently, is
 * answered by check 4.
 * Each check stands down once this sign-in has its result, as oidc-provider's do. What the
 * sign-in then asks is step-up-flow.ts and next-step.ts.
 */
import { PLANTCTL_CLIENT_ID } from '@plant/shared/api';
import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import type { SignInRules } from '../oidc/index.js';
import {
  ACR_VALUES,
  FACTOR_ACR,
  hasSecondFactor,
  isPlantAction,
  mustEnrol,
  type SignInPerson,
} from '../second-factors/index.js';

type PersonOf = (sub: string) => Promise<SignInPerson | undefined>;

const { base, Check } = interactionPolicy;

/** 1. An enrolment the portal asked for is always a sign-in of its own. */
function portalAsksEnrolment(ctx: KoaContextWithOIDC) {
  return isPlantAction(ctx.oidc.params?.plant_action) && !ctx.oidc.result?.login
    ? Check.REQUEST_PROMPT
    : Check.NO_NEED_TO_PROMPT;
}

/** 2. A second factor asked for and not verified by the session's sign-in: the step-up. */
function factorAcrUnmet(ctx: KoaContextWithOIDC) {
  const requested = String(ctx.oidc.params?.acr_values ?? '').split(' ');
  return requested.includes(FACTOR_ACR) &&
    ctx.oidc.session?.acr !== FACTOR_ACR &&
    !ctx.oidc.result?.login
    ? Check.REQUEST_PROMPT
    : Check.NO_NEED_TO_PROMPT;
}

/** 3. An Account Admin the policy requires a factor of enrols before any sign-in passes. */
function adminMustEnrol(personOf: PersonOf) {
  return async function adminMustEnrolCheck(ctx: KoaContextWithOIDC) {
    const accountId = ctx.oidc.session?.accountId;
    if (accountId === undefined || ctx.oidc.result?.login) return Check.NO_NEED_TO_PROMPT;
    const person = await personOf(accountId);
    return person !== undefined && mustEnrol(person)
      ? Check.REQUEST_PROMPT
      : Check.NO_NEED_TO_PROMPT;
  };
}

/**
 * 4. plantctl's sign-in (its device grant's approval, or its loopback redirect) is always one of
 *    its own: whoever has the browser's realm session, the person signs in (password and second
 *    factor, or a passkey) for this device.
 */
function plantctlSignIn(ctx: KoaContextWithOIDC) {
  return ctx.oidc.client?.clientId === PLANTCTL_CLIENT_ID && !ctx.oidc.result?.login
    ? Check.REQUEST_PROMPT
    : Check.NO_NEED_TO_PROMPT;
}

/** oidc-provider's sign-in policy with our four checks added to its login prompt. */
export function signInPolicy(personOf: PersonOf) {
  const policy = base();
  const login = policy.get('login');
  if (!login) throw new Error("oidc-provider's base policy has no login prompt");
  login.checks.add(
    new Check(
      'plant_action',
      'the portal asked for a second-factor enrolment',
      portalAsksEnrolment,
    ),
  );
  login.checks.add(new Check('factor_acr', 'a second factor is required', factorAcrUnmet));
  login.checks.add(
    new Check('plantctl_sign_in', 'a plantctl sign-in signs in afresh', plantctlSignIn),
  );
  policy.get('consent')?.checks.remove('native_client_prompt');
  login.checks.add(
    // `login_required` for a silent sign-in: the enrolment asks the password again.
    new Check(
      'admin_factor',
      'the account must enrol a second factor',
      'login_required',
      adminMustEnrol(personOf),
    ),
  );
  return policy;
}

/** The realm's sign-in rules as oidc's realm configuration reads them (its port, `SignInRules`). */
export const signInRules: SignInRules = {
  acrValues: ACR_VALUES,
  policy: signInPolicy,
  factorsEnrolled: hasSecondFactor,
};
