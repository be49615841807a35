/**
 * The sign-in wing. Owns: interactive sign-in: the interaction routes and their steps,
 * authenticating a person, password hashing and its checkers (decision 0011), the sign-in form and
 * throttle.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: credentials, oidc, people, platform, second-factors
 */
export { interactionRoutes } from './interaction-routes.js';
export type { InteractionDeps } from './interaction-routes.js';
export { PasswordCheckers, defaultPasswordCheckers } from './password-checkers.js';
export { hashPassword } from './passwords.js';
export { createSignInFailureRepository } from './sign-in-failure-repository.js';
export { BUSY, PASSWORD_MAX, waitWording } from './sign-in-form.js';
export { signInPolicy } from './sign-in-policy.js';
export { SignInThrottle, isRefusal } from './sign-in-throttle.js';
