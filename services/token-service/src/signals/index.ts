/**
 * The signals wing. Owns: shared Signals (decision 0017): streams, the outbox's notifications,
 * push delivery, security event tokens, and their routes. Events are built and queued by the
 * signal-outbox wing below it.
 *
 * Other wings import it through this module only; it imports other wings only through theirs.
 *
 * May call: client-auth, grants, platform, realms, signal-outbox, signing-keys
 */
export { SecurityEventTokenSigner } from './security-event-tokens.js';
export type { SharedSignalsContext } from './shared-signals.js';
export { SignalDelivery } from './signal-delivery.js';
export { SignalNotifications } from './signal-notifications.js';
export { signalRoutes } from './signal-routes.js';
export { createSignalStreamRepository } from './signal-stream-repository.js';
export type { SignalStreamRepository } from './signal-stream-repository.js';
