/**
 * The one rule for an email address the platform records and mails to (a person's, an
 * invitation's): exactly one mailbox, `local@domain`, in the plain form a person reads and a
 * mailer cannot read as anything else.
 *
 * An address is a credential's destination (an invitation's link goes to it) and a name a
 * person reads on People and Activity, so two rules hold. The text rule of names
 * (`nameText`, name-text.ts) refuses what changes what is shown without being seen: bidi
 * overrides and isolates, zero-width characters, soft hyphens, other format and control
 * characters. The address form refuses everything of RFC 5322 beyond a bare addr-spec that a
 * mailer would act on: display names (`victim<attacker@evil.example>`), lists
 * (`victim,attacker@evil.example`), groups (`group:attacker@evil.example;`), comments, quoted
 * local parts, domain literals, and the source routes some MTAs still follow (`%`, `!`). The
 * local part is a dot-atom of ASCII `atext` without those two, at most 64 characters (RFC
 * 5321 §4.5.3.1.1); the domain is ASCII letters, digits and hyphens in two labels or more, at
 * most 63 characters each: an internationalized domain in its A-label form (`xn--…`).
 *
 * ASCII only, because a non-ASCII local part needs SMTPUTF8 end to end, and a non-ASCII domain
 * is sent as its A-label anyway (nodemailer converts it), so the address mailed would not be
 * the address recorded; and look-alike letters (a Cyrillic `а`) cannot make one address look
 * like another. The domain's case means nothing (DNS) and mailers fold it:
 * `normalizeMailbox` folds it before the address is recorded, so the recorded address is the
 * one the mail is sent to, character for character.
 */
import { nameText } from './api-types.js';

/** RFC 5322 `atext` without `%` and `!` (source routes): what a dot-atom local part is made of. */
const ATOM = "[A-Za-z0-9#$&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const MAILBOX = new RegExp(`^(${ATOM}(?:\\.${ATOM})*)@(${LABEL}(?:\\.${LABEL})+)$`);
/** RFC 5321 §4.5.3.1.1. */
const LOCAL_PART_MAX = 64;

/** The form in one sentence, for messages and documents. */
export const MAILBOX_RULE =
  'one mailbox local@domain in ASCII, without a display name, list, group, comment or quotes';

/** True when `text` is exactly one mailbox in the strict form (ASCII dot-atom local part, LDH domain). */
export function isMailbox(text: string): boolean {
  const match = MAILBOX.exec(text);
  return match !== null && match[1]!.length <= LOCAL_PART_MAX;
}

/** The address as it is recorded and mailed: the domain in lower case, the local part as given. */
export function normalizeMailbox(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
}

/**
 * A zod schema of an email address: `nameText`'s rule (length, control and invisible
 * characters, each with its own message), then the strict mailbox form. Parsing leaves the
 * text as given; the use case that records it calls `normalizeMailbox`.
 */
export function mailboxAddress(field: string, max: number) {
  return nameText(field, max)
    .refine(isMailbox, { error: `${field} must be an email address: ${MAILBOX_RULE}` })
    .meta({ format: 'email', description: `An email address: ${MAILBOX_RULE}` });
}
