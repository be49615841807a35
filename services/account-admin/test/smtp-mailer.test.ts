/** The SMTP mailer against the test kit's real SMTP listener: credentials from the URL, refusals, and the listener's own bound. */
import { describe, expect, test } from '@jest/globals';
import { startSmtpListener } from '@plant/test-kit';
import { createSmtpMailer } from '../src/data-access/smtp-mailer.js';

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
