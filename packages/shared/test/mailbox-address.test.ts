/** The mailbox rule (mailbox-address.ts): pure functions, checked on their own; the services' tests send the attacks. */
import { describe, expect, it } from '@jest/globals';
import { isMailbox, mailboxAddress, normalizeMailbox } from '../src/api/index.js';

const EMAIL = mailboxAddress('email', 254);
const messageOf = (text: string) => EMAIL.safeParse(text).error?.issues[0]?.message;

describe('isMailbox', () => {
  it.each([
    'kim@demo.example',
    "o'neil+ops@mail.example-corp.test",
    'a.b.c@x.y.z.example',
    'a@xn--jgeva-dua.ee',
    "#$&'*+/=?^_`{|}~-@b.example",
    `${'a'.repeat(64)}@b.example`,
  ])('When the address is %s, then it is one mailbox', (text) => {
    expect(isMailbox(text)).toBe(true);
  });

  it.each([
    'victim<attacker@evil.example>',
    'victim,attacker@evil.example',
    'group:attacker@evil.example;',
    '"a"@b.example',
    'a@b.example (x)',
    'a@[127.0.0.1]',
    'a%b@c.example',
    'a!b@c.example',
    'a@b',
    'a@b..example',
    'a@b.example.',
    'a@-b.example',
    'a@b-.example',
    'jos\u00e9@b.example',
    'a@j\u00f5geva.ee',
    `${'a'.repeat(65)}@b.example`,
    `a@${'b'.repeat(64)}.example`,
    '',
  ])('When the address is %j, then it is no mailbox', (text) => {
    expect(isMailbox(text)).toBe(false);
  });
});

describe('mailboxAddress', () => {
  it('When an address holds an invisible character, then the name rule says so before the form', () => {
    expect(messageOf('ad\u200bmin@b.example')).toBe(
      'email must not contain invisible or formatting characters (bidi controls, zero-width and the like)',
    );
    expect(messageOf('a\u202e@b.example')).toMatch(/^email must not contain invisible/);
  });

  it('When an address is a list or a display name, then the message names the form', () => {
    expect(messageOf('victim<attacker@evil.example>')).toBe(
      'email must be an email address: one mailbox local@domain in ASCII, without a display name, list, group, comment or quotes',
    );
  });

  it('When an address is too long, then the length is the message', () => {
    expect(messageOf(`${'a'.repeat(60)}@${'b'.repeat(200)}.example`)).toBe(
      'email must be at most 254 characters',
    );
  });
});

describe('normalizeMailbox', () => {
  it('When a domain has capitals, then only the domain is folded', () => {
    expect(normalizeMailbox('Kim.O@Mail.EXAMPLE.test')).toBe('Kim.O@mail.example.test');
  });
});
