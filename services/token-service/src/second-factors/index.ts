/**
 * The second-factors wing. Owns: a person's second factors: TOTP, passkeys, recovery codes, the
 * realm's factor policy, the factor pages and scripts, their repositories, and the internal factor
 * routes. What an attempt spends is sign-in's throttle, handed in through the port
 * attempt-budget.ts names.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: changes, credentials, oidc, people, people-audit, platform, service-accounts
 */
export {
  CODE_MAX,
  PASSKEY_REFUSED,
  PASSKEY_RESPONSE_MAX,
  WRONG_CODE,
  continuePage,
  enrolPage,
  factorPage,
  passkeyForm,
  recoveryCodesPage,
} from './factor-pages.js';
export type { FormTarget } from './factor-pages.js';
export { factorRoutes } from './internal-factor-routes.js';
export { PASSKEY_SCRIPTS, passkeyScriptRoutes } from './passkey-script.js';
export {
  authenticationOptions,
  finishAuthentication,
  finishRegistration,
  registrationOptions,
} from './passkeys.js';
export type { PasskeyAuthentication, PasskeyDeps } from './passkeys.js';
export {
  ACR_VALUES,
  AMR,
  FACTOR_ACR,
  PASSWORD_ACR,
  confirmTotpEnrolment,
  getFactorPolicy,
  hasSecondFactor,
  isPlantAction,
  mustEnrol,
  nextStep,
  pendingTotp,
  replaceRecoveryCodes,
  resetFactors,
  setFactorPolicy,
  startTotpEnrolment,
  verifyCode,
} from './second-factors.js';
export type { ChangePublisher, FactorDeps, ManageDeps, PlantAction } from './second-factors.js';
export { createUserFactorRepository } from './user-factor-repository.js';
export type { SignInPerson, UserFactorRepository } from './user-factor-repository.js';
export { createWebAuthnChallengeRepository } from './webauthn-challenge-repository.js';
