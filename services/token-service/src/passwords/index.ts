/**
 * The passwords wing. Owns: a person's password: its scrypt hash and verification (decision
 * 0011), its longest accepted length, and the checker threads every check and new hash runs on
 * (a bounded number, refused when busy, with the words a person then reads). Signing in checks
 * passwords, accepting an invitation and creating a realm hash them: each of those wings calls
 * this one, which sits below them all.
 *
 * Other wings import it through this module only.
 *
 * May call: nothing
 */
export { BUSY, PasswordCheckers, defaultPasswordCheckers } from './password-checkers.js';
export type { CheckerSlot } from './password-checkers.js';
export { DUMMY_PASSWORD_HASH, PASSWORD_MAX, hashPassword } from './passwords.js';
