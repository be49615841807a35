/**
 * Emails an attacker invites: each is read as another mailbox, a list or a group by a mailer
 * (nodemailer's address parser takes display names, lists, groups and comments), routed elsewhere
 * by an MTA (percent hack, bang path, domain literal), or shown as something it is not (bidi
 * overrides and isolates, zero-width characters, soft hyphens, look-alike at signs). Each pair:
 * what it is, the email. Every one must be refused (400) wherever an email is taken.
 */
export const HOSTILE_EMAILS: Array<[string, string]> = [
  ['a display name around another mailbox', 'victim<attacker@evil.example>'],
  ['a quoted display name', '"Victim" <attacker@evil.example>'],
  ['a list', 'victim,attacker@evil.example'],
  ['a list of two mailboxes', 'victim@corp.example,attacker@evil.example'],
  ['a group', 'group:attacker@evil.example;'],
  ['a quoted local part', '"a"@b.example'],
  ['a quoted local part with an @', '"victim@corp.example"@evil.example'],
  ['a comment', 'a@b.example (x)'],
  ['a comment before', '(x)a@b.example'],
  ['a domain literal', 'a@[127.0.0.1]'],
  ['two @', 'victim@corp.example@evil.example'],
  ['a percent-hack route', 'victim%evil.example@corp.example'],
  ['a bang path', 'evil.example!victim@corp.example'],
  ['a leading dot', '.a@b.example'],
  ['two dots', 'a..b@b.example'],
  ['a trailing dot in the domain', 'a@b.example.'],
  ['a hyphen starting a label', 'a@-b.example'],
  ['a semicolon', 'a;b@b.example'],
  ['a bidi override', 'admin\u202E@b.example'],
  ['a right-to-left isolate', 'a\u2067b@b.example'],
  ['a zero-width space', 'ad\u200Bmin@b.example'],
  ['a zero-width joiner in the domain', 'admin@ex\u200Dample.test'],
  ['a soft hyphen', 'ad\u00ADmin@b.example'],
  ['a BOM', '\uFEFFadmin@b.example'],
  ['a line separator', 'a\u2028b@b.example'],
  ['a no-break space', 'a\u00A0b@b.example'],
  ['a fullwidth at sign', 'victim\uFF20evil.example'],
  ['a non-ASCII local part', 'jos\u00E9@b.example'],
  ['a local part over 64 characters', `${'a'.repeat(65)}@b.example`],
];
