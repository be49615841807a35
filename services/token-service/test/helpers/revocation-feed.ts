import { expect } from '@jest/globals';
import type {
  LiveRevocationEntry,
  RevocationChanges,
  RevocationSnapshot,
} from '@plant/shared/token-service-client';
import { TEST_REDIS_URL } from '@plant/test-kit';
import { Redis } from 'ioredis';
import request from 'supertest';
import { startHarness, TEST_ENV, type Harness } from './harness.js';
import { internal } from './internal-client.js';
import { usePrivateHarness } from './private-database.js';

/** A resource server's credential: the revocation routes are what it may call. */
export const RESOURCE_SERVER = `Bearer ${TEST_ENV.RESOURCE_SERVER_TOKENS.split(',')[0]}`;

/** The revocation routes as a resource server calls them. */
export function feed(h: Harness) {
  const agent = request(h.internalUrl);
  return {
    /** The raw answer of the changes route (hostile tests read the status and body). */
    changesRaw(query: string) {
      return agent
        .get(`/internal/v1/revocations/changes${query}`)
        .set('authorization', RESOURCE_SERVER);
    },
    async changes(after: string, limit?: number): Promise<RevocationChanges> {
      const res = await agent
        .get(
          `/internal/v1/revocations/changes?after=${after}${limit === undefined ? '' : `&limit=${limit}`}`,
        )
        .set('authorization', RESOURCE_SERVER);
      expect(res.status).toBe(200);
      return res.body as RevocationChanges;
    },
    async snapshot(): Promise<RevocationSnapshot> {
      const res = await agent.get('/internal/v1/revocations').set('authorization', RESOURCE_SERVER);
      expect(res.status).toBe(200);
      return res.body as RevocationSnapshot;
    },
    /** Every page after `after` until `more` is false: the entries and the position reached. */
    async readAll(
      after: string,
      limit?: number,
    ): Promise<{ entries: LiveRevocationEntry[]; position: string; pages: number }> {
      const entries: LiveRevocationEntry[] = [];
      let position = after;
      for (let pages = 1; ; pages++) {
        const page = await this.changes(position, limit);
        if (page.reset) throw new Error(`the feed asked for a reset after ${position}`);
        entries.push(...page.entries);
        position = page.position;
        if (!page.more) return { entries, position, pages };
      }
    },
  };
}

/** Seconds a change stays needed in these tests: the harness's token lifetime plus the margin. */
export const horizonOf = (h: Harness) => h.config.ACCESS_TOKEN_TTL + 60;

/** Moves a realm's recorded changes (and its deletions) `seconds` into the past, as if they had happened then. */
export async function ageChanges(h: Harness, tenant: string, seconds: number): Promise<void> {
  const { db } = h.service;
  await db('revocation_changes')
    .where({ realm: tenant })
    .update({ changed_at: db.raw('changed_at - make_interval(secs => ?)', [seconds]) });
  await db('principals')
    .where({ realm: tenant })
    .whereNotNull('deleted_at')
    .update({ deleted_at: db.raw('deleted_at - make_interval(secs => ?)', [seconds]) });
}

/** What a change of a principal looks like in the feed, its ttl aside. */
export const entryOf = (
  tenant: string,
  sub: string,
  version: number,
  deleted = false,
): Record<string, unknown> => ({ tenant, sub, version, deleted, ttl: expect.any(Number) });

export interface FeedContext {
  h: Harness;
  api: ReturnType<typeof internal>;
  changes: ReturnType<typeof feed>;
}

/** A harness on a database of the file's own (the feed's head and floor are global), with its clients. */
export function useFeedHarness(): { get(): FeedContext } {
  const harness = usePrivateHarness(startHarness);
  return {
    get() {
      const h = harness.get();
      return { h, api: internal(h), changes: feed(h) };
    },
  };
}

/**
 * The revocation channel as a replica hears it, every published entry collected in `events`.
 * The test Redis is shared by every suite running at once, and some publish forged messages on
 * this channel on purpose (resource-auth's revocation-sync: "not json"): those are skipped here,
 * as a replica skips them, instead of throwing inside the subscriber.
 */
export async function listenToRevocations(): Promise<{
  events: Array<Record<string, unknown>>;
  close(): void;
}> {
  const events: Array<Record<string, unknown>> = [];
  const subscriber = new Redis(TEST_REDIS_URL);
  subscriber.on('message', (_channel: string, message: string) => {
    let entry: unknown;
    try {
      entry = JSON.parse(message);
    } catch {
      return;
    }
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
      // The entry as resource servers apply it: the envelope (trace context, publication time) aside.
      const { traceparent, tracestate, published_ms, ...applied } = entry as Record<
        string,
        unknown
      >;
      events.push(applied);
    }
  });
  await subscriber.subscribe('plantstore:revocations');
  return { events, close: () => subscriber.disconnect() };
}
