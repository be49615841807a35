/**
 * The signal-outbox wing. Owns: the low half of Shared Signals (decision 0017): the event types
 * and the outbox, where an event is built and queued in the transaction of the change it reports
 * (`signal-outbox.ts`). The wings that change service accounts and the change-effects table name
 * their events here; the signals wing above delivers them (streams, push, poll, their routes).
 *
 * Other wings import it through this module only.
 *
 * May call: nothing
 */
export {
  EVENT_TYPES,
  SIGNAL_CHANNEL,
  SUPPORTED_EVENT_TYPES,
  ownerMayReceive,
  recordSignals,
  recordVerification,
} from './signal-outbox.js';
export type { AccountSignal, InitiatingEntity } from './signal-outbox.js';
