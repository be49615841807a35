/**
 * A real SMTP server (`smtp-server`) on a loopback port that keeps every message it receives,
 * for tests of the e-mail path: point `SMTP_URL` at `url`, act, then wait for the message with
 * `next()`. Plain SMTP (no STARTTLS offered), optional credentials; `failing` makes it refuse
 * every message (a 550 at the end of DATA), to test what a failed send does.
 */
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw message (headers and body) as received. */
  raw: string;
  /** The user name it authenticated with, if any. */
  user: string | undefined;
}

export interface SmtpListener {
  /** `smtp://[user:pass@]127.0.0.1:<port>` */
  url: string;
  messages: ReceivedMail[];
  /** The next message not yet taken (waits for it). */
  next(timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export interface SmtpListenerOptions {
  credentials?: { user: string; pass: string };
  failing?: boolean;
  /** At most this many messages are kept (default 1000); more are accepted and dropped. */
  maxKept?: number;
}

export async function startSmtpListener({
  credentials,
  failing = false,
  maxKept = 1000,
}: SmtpListenerOptions = {}): Promise<SmtpListener> {
  const messages: ReceivedMail[] = [];
  let taken = 0;
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    disabledCommands: credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authOptional: credentials === undefined,
    logger: false,
    onAuth(auth, _session, callback) {
      if (credentials && auth.username === credentials.user && auth.password === credentials.pass)
        callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (failing) {
          const refusal = Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 });
          callback(refusal);
          return;
        }
        if (messages.length < maxKept)
          messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
            user: typeof session.user === 'string' ? session.user : undefined,
          });
        for (const wake of waiters.splice(0)) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as { port: number };
  const auth = credentials
    ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@`
    : '';
  return {
    url: `smtp://${auth}127.0.0.1:${port}`,
    messages,
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (taken >= messages.length) {
        if (Date.now() > deadline) throw new Error('no e-mail arrived');
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100).unref();
        });
      }
      taken += 1;
      return messages[taken - 1]!;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
