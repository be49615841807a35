/**
 * Changes: what each kind of change (a reset, a deletion, a role, a leak, a factor reset…)
 * revokes, publishes, signals and audits, as one table (`change-effects.ts`) that the
 * repositories apply and docs/change-effects.md renders. A new kind of change starts here.
 *
 * May call: realms, signal-outbox
 */
export { accountEffectsOf, effectsOf } from './change-effects.js';
export type { AccountChangeKind, AccountEffects, ChangeKind } from './change-effects.js';
