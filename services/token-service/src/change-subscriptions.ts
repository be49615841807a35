/**
 * The change channels on Redis, one subscription per replica: revocations (credentials/cache
 * of the account), key changes (realms/realm-naming.ts: the realm's provider is rebuilt) and
 * client authentication failures (client-auth: the failure hints). Each message goes to the
 * wing it is about; a malformed one is dropped with a warning, never half-read.
 */
import type { Logger } from '@plant/shared/logging';
import { withTimeout } from '@plant/shared/util';
import { parseRevocationMessage, REVOCATION_CHANNEL } from '@plant/shared/token-service-client';
import type { Redis } from 'ioredis';
import {
  CLIENT_AUTH_FAILURE_CHANNEL,
  type ClientAuthFailureRepository,
} from './client-auth/index.js';
import type { ClientCredentialRepository } from './credentials/index.js';
import type { RealmProviders } from './oidc/index.js';
import { KEY_ROTATION_CHANNEL, keyChangeMessage, parseKeyChangeMessage } from './realms/index.js';
import { REPUBLISH_MAX_MS, type RevocationPublisher } from './revocation/index.js';

/** How long a key change's answer waits for Redis to take its announcement (replicas re-check every 30 s anyway). */
const ANNOUNCE_TIMEOUT_MS = 1_000;

export interface ChangeSubscriptionDeps {
  subscriber: Redis;
  publisher: RevocationPublisher;
  credentials: ClientCredentialRepository;
  failures: ClientAuthFailureRepository;
  providers: RealmProviders;
  logger: Logger;
}

/** Each channel's message to the wing it is about. */
function routeChanges({
  subscriber,
  credentials,
  failures,
  providers,
  logger,
}: ChangeSubscriptionDeps) {
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === CLIENT_AUTH_FAILURE_CHANNEL) {
      failures.hints?.onAnnouncedFailure(message);
      return;
    }
    if (channel === REVOCATION_CHANNEL) {
      // The same parser as the resource servers': a malformed event is dropped, never half-read.
      const entry = parseRevocationMessage(message);
      if (entry !== undefined) credentials.forget(entry.tenant, entry.sub);
      else logger.warn({ channel }, 'ignored a malformed event');
      return;
    }
    const tenant = channel === KEY_ROTATION_CHANNEL ? parseKeyChangeMessage(message) : undefined;
    if (tenant !== undefined) providers.invalidate(tenant);
    else logger.warn({ channel }, 'ignored a malformed event');
  });
}

/**
 * Without the subscription change events are missed: credentials come from Postgres on every
 * grant until it is confirmed again (a Redis restart or failover), and a while longer: another
 * replica's publish that failed in the same outage goes out once its own connection is back
 * (its republish comes at most REPUBLISH_MAX_MS apart). Then the cache starts anew.
 */
function trustCredentialsWhileSubscribed({ subscriber, credentials }: ChangeSubscriptionDeps) {
  let outages = 0;
  subscriber.on('close', () => {
    outages += 1;
    credentials.distrust();
  });
  subscriber.on('ready', () => {
    const outage = outages;
    subscriber.subscribe(REVOCATION_CHANNEL, KEY_ROTATION_CHANNEL).then(
      () =>
        setTimeout(() => outage === outages && credentials.trust(), 2 * REPUBLISH_MAX_MS).unref(),
      () => undefined,
    );
  });
}

/**
 * Failure announcements missed while disconnected: distrust the hints until rebuilt from Redis,
 * once the channel is subscribed again.
 */
function trustFailureHintsWhileSubscribed({ subscriber, failures }: ChangeSubscriptionDeps) {
  const failureHints = failures.hints;
  if (!failureHints) return;
  subscriber.on('close', () => failureHints.suspend());
  subscriber.on('ready', () => {
    subscriber.subscribe(CLIENT_AUTH_FAILURE_CHANNEL).then(
      () => failureHints.resync(),
      () => failureHints.suspend(),
    );
  });
  // Not awaited: until the hints are rebuilt (a SCAN of every counter) each grant asks Redis,
  // which is correct, only slower; a start must not wait for a scan that grows with the keys.
  void failureHints.resync();
}

/** Follows the change channels; resolves once Redis confirmed the first subscription. */
export async function subscribeToChanges(deps: ChangeSubscriptionDeps): Promise<void> {
  const { subscriber, publisher, credentials } = deps;
  // This replica's cache drops a changed account before the API answers; others hear it on Redis.
  publisher.onLocal((entry) => credentials.forget(entry.tenant, entry.sub));
  routeChanges(deps);
  trustCredentialsWhileSubscribed(deps);
  await subscriber.subscribe(REVOCATION_CHANNEL, KEY_ROTATION_CHANNEL, CLIENT_AUTH_FAILURE_CHANNEL);
  trustFailureHintsWhileSubscribed(deps);
}

/** A key change: this replica's provider at once; the others (and this one again, harmlessly) when they hear it. */
export function keyChangeAnnouncer(
  redis: Redis,
  providers: RealmProviders,
  logger: Logger,
): (tenant: string) => Promise<void> {
  return async (tenant) => {
    providers.invalidate(tenant);
    await withTimeout(
      redis.publish(KEY_ROTATION_CHANNEL, keyChangeMessage(tenant)),
      ANNOUNCE_TIMEOUT_MS,
      'key change announcement',
    ).catch((err: Error) =>
      logger.warn(
        { tenant, err: { message: err.message } },
        'could not announce a key change on Redis; other replicas pick it up at their next realm re-check',
      ),
    );
  };
}
