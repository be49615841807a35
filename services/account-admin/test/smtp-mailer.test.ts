/** The SMTP mailer against the test kit's real SMTP listener: credentials from the URL, refusals, and the listener's own bound. */
import { describe, expect, test } from '@jest/globals';
import { startSmtpListener } from '@plant/test-kit';
import { createSmtpMailer } from '../src/people/smtp-mailer.js';

const MAIL = { to: 'b@example.test', subject: 'Hi' };

describe('the SMTP mailer', () => {
  test('When it sends with the credentials of SMTP_URL, then the message arrives whole from SMTP_FROM, and a wrong password is refused', async () => {
    const smtp = await startSmtpListener({ credentials: { user: 'u@x', pass: 'p:ss word' } });
    const mailer = createSmtpMailer(smtp.url, 'Plants <a@example.test>');
    const wrong = createSmtpMailer(smtp.url.replace('p%3Ass%20word', 'nope'), 'a@example.test');
    try {
      await mailer.send({ ...MAIL, text: 'body 1' });
      const refused = wrong.send({ ...MAIL, text: 'x' });

      const mail = await smtp.next();
      expect(mail).toMatchObject({ from: 'a@example.test', to: ['b@example.test'], user: 'u@x' });
      expect(mail.raw).toContain('body 1');
      expect(mail.raw).toContain('From: Plants <a@example.test>');
      await expect(refused).rejects.toThrow();
    } finally {
      mailer.close();
      wrong.close();
      await smtp.close();
    }
  });

  test.each([
    'victim<attacker@evil.example>',
    'victim,attacker@evil.example',
    'group:attacker@evil.example;',
    '"victim" <attacker@evil.example>',
    'victim@corp.example (attacker@evil.example)',
  ])(
    'When it is handed %j, which a mailer reads as other mailboxes, then it refuses to send and nothing reaches the server',
    async (to) => {
      const smtp = await startSmtpListener();
      const mailer = createSmtpMailer(smtp.url, 'a@example.test');
      try {
        await expect(mailer.send({ ...MAIL, to, text: 'the link' })).rejects.toThrow(
          'not one mailbox',
        );
        await mailer.send({ ...MAIL, text: 'after' });

        const mail = await smtp.next();
        expect(mail.to).toEqual(['b@example.test']);
        expect(mail.raw).toContain('after');
        expect(smtp.messages).toHaveLength(1);
      } finally {
        mailer.close();
        await smtp.close();
      }
    },
  );

  test('When it sends to a mailbox, then the one RCPT TO and the To header are exactly that address', async () => {
    const smtp = await startSmtpListener();
    const mailer = createSmtpMailer(smtp.url, 'Plants <a@example.test>');
    const to = "Kim.O'Neil+ops_1@mail.example-corp.test";
    try {
      await mailer.send({ ...MAIL, to, text: 'x' });

      const mail = await smtp.next();
      expect(mail.from).toBe('a@example.test');
      expect(mail.to).toEqual([to]);
      expect(mail.raw.split(/\r?\n/)).toContain(`To: ${to}`);
    } finally {
      mailer.close();
      await smtp.close();
    }
  });

  test('When the server refuses the message, then the send rejects', async () => {
    const smtp = await startSmtpListener({ failing: true });
    const mailer = createSmtpMailer(smtp.url, 'a@example.test');
    try {
      await expect(mailer.send({ ...MAIL, text: 'x' })).rejects.toThrow(/550/);
      expect(smtp.messages).toEqual([]);
    } finally {
      mailer.close();
      await smtp.close();
    }
  });

  test('When more messages arrive than the listener keeps, then the first ones are kept and the rest dropped', async () => {
    const smtp = await startSmtpListener({ maxKept: 2 });
    const mailer = createSmtpMailer(smtp.url, 'a@example.test');
    try {
      for (const n of [1, 2, 3]) await mailer.send({ ...MAIL, text: `message ${n}` });

      expect(smtp.messages.map((m) => /message (\d)/.exec(m.raw)?.[1])).toEqual(['1', '2']);
    } finally {
      mailer.close();
      await smtp.close();
    }
  });
});
