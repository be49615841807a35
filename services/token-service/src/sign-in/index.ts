/**
 * The sign-in wing. Owns: interactive sign-in: the interaction routes and their steps,
 * authenticating a person (against passwords/' hashes, decision 0011), the sign-in form and
 * throttle.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: credentials, oidc, passwords, people, platform, second-factors
 */
export { interactionRoutes } from './interaction-routes.js';
export type { InteractionDeps } from './interaction-routes.js';
export { createSignInFailureRepository } from './sign-in-failure-repository.js';
export { signInRules } from './sign-in-policy.js';
export { SignInThrottle } from './sign-in-throttle.js';
