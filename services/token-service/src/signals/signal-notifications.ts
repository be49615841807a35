import type { Knex } from '@plant/shared/db';
import type { Logger } from '@plant/shared/logging';
import { SIGNAL_CHANNEL } from '../signal-outbox/index.js';

interface RawConnection {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', listener: (msg: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', listener: (err?: Error) => void): void;
  end(): Promise<void>;
}

/** How long a lost LISTEN connection waits before it connects again. */
const RECONNECT_MS = 1000;

/**
 * LISTEN on the outbox's channel over a connection of its own (outside the pool: it is held
 * for the process's life). `onStream` hears the id of each stream that got events at commit,
 * on every replica; `onResume` runs after each (re)connection, since notifications sent
 * while it was down are lost (the deliverers' periodic sweep covers that gap too).
 */
export class SignalNotifications {
  #connection: RawConnection | undefined;
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Knex,
    private readonly handlers: { onStream(id: string): void; onResume(): void },
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.#stopped) return;
    try {
      const connection = (await this.db.client.acquireRawConnection()) as RawConnection;
      connection.on('notification', (msg) => {
        if (msg.channel === SIGNAL_CHANNEL && msg.payload) this.handlers.onStream(msg.payload);
      });
      const lost = (err?: Error) => {
        if (this.#connection !== connection) return;
        this.#connection = undefined;
        if (!this.#stopped)
          this.logger.warn(
            { err: { message: err?.message } },
            'signal notifications lost; reconnecting',
          );
        this.#schedule();
      };
      connection.on('error', lost);
      connection.on('end', lost);
      await connection.query(`LISTEN ${SIGNAL_CHANNEL}`);
      this.#connection = connection;
      if (this.#stopped) await connection.end().catch(() => undefined);
      else this.handlers.onResume();
    } catch (err) {
      this.logger.warn(
        { err: { message: (err as Error).message } },
        'signal notifications unavailable; retrying',
      );
      this.#schedule();
    }
  }

  #schedule(): void {
    if (this.#stopped || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.start();
    }, RECONNECT_MS);
    this.#retry.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    const connection = this.#connection;
    this.#connection = undefined;
    await connection?.end().catch(() => undefined);
  }
}
