/**
 * Outbound e-mail over SMTP (nodemailer): the invitation messages. `SMTP_URL` names the server
 * and its credentials (`smtp://` or `smtps://user:password@host:port`); without it nothing is
 * sent and callers say so. The transport is pooled (a few connections, reused), with timeouts,
 * so a slow server delays one invitation's answer by at most the timeouts, never more. A message
 * waits in the pool's queue only while its invitation request waits for it, so the queue holds
 * at most the invitations in flight.
 *
 * The recipient is exactly one mailbox, or nothing is sent. nodemailer reads a `to` string as
 * an address list (display names, lists, groups, comments): `victim<attacker@evil.example>`
 * would go to the attacker while the invitation is recorded under the whole string. So `to`
 * must be one strict mailbox (`isMailbox`, the rule the API takes emails by), and it goes to
 * nodemailer as an address object, in the header and in the envelope, which nodemailer never
 * parses again: the RCPT TO is the recorded address, character for character.
 */
import { isMailbox } from '@plant/shared/api';
import nodemailer from 'nodemailer';

export interface OutgoingMail {
  /** One mailbox `local@domain` (`isMailbox`); anything else is refused, never parsed. */
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Resolves once the server accepted the message; rejects otherwise. */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const url = new URL(smtpUrl);
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 587)),
    secure: url.protocol === 'smtps:',
    ...(url.username
      ? {
          auth: {
            user: decodeURIComponent(url.username),
            pass: decodeURIComponent(url.password),
          },
        }
      : {}),
    pool: true,
    maxConnections: 2,
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 10_000,
  });
  return {
    async send(mail) {
      if (!isMailbox(mail.to))
        throw new Error('refusing to mail an address that is not one mailbox');
      const recipient = { name: '', address: mail.to };
      await transport.sendMail({
        from,
        to: recipient,
        envelope: { from, to: [recipient] },
        subject: mail.subject,
        text: mail.text,
      });
    },
    close() {
      transport.close();
    },
  };
}
