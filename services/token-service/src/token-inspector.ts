/**
 * The verification behind token introspection: the token service checks a token exactly as a
 * resource server does, with `@plant/resource-auth` (the realm's published keys, the claims, the
 * live revocation map fed by Redis events over the Postgres snapshot), reached through its own
 * internal API like any resource server. So introspection answers what the Plant Store would,
 * at the same moment, and a reset reaches both within the same propagation bound.
 *
 * Its credential for the internal API is made at start and never leaves the process: the
 * internal API admits it with the resource servers' scope (`verify`).
 */
import { randomBytes } from 'node:crypto';
import {
  createBearerAuth,
  createRevocationSync,
  type BearerAuth,
  type Principal,
  type RevocationSync,
} from '@plant/resource-auth';
import { ServiceUnavailable } from '@plant/shared/api';
import { currentRequestId, type Logger } from '@plant/shared/logging';
import { inConsumerSpan } from '@plant/shared/tracing';
import { redisTargetOf, type RedisConfig } from '@plant/shared/redis';
import type { Registry } from 'prom-client';
import { listOf, type TokenServiceConfig } from './config.js';
import type { TokenInspector } from './grants/index.js';

type InspectorConfig = Pick<
  TokenServiceConfig,
  | 'AUTH_URL'
  | keyof RedisConfig
  | 'PLANT_STORE_AUDIENCE'
  | 'ACCOUNT_ADMIN_AUDIENCE'
  | 'API_AUDIENCES'
>;

export class LiveTokenInspector implements TokenInspector {
  /** This process's own internal API credential (scope `verify`). */
  readonly credential = randomBytes(32).toString('base64url');
  #running: { auth: BearerAuth; revocation: RevocationSync } | undefined;

  constructor(
    private readonly options: { config: InspectorConfig; logger: Logger; metrics: Registry },
  ) {}

  /** Starts verifying against the internal API at `internalUrl` (once it listens); resolves when the revocation map is live or has tried. */
  async start(internalUrl: string): Promise<void> {
    if (this.#running !== undefined) return;
    const { config, logger, metrics } = this.options;
    const revocation = createRevocationSync({
      redis: redisTargetOf(config),
      tokenServiceUrl: internalUrl,
      internalToken: this.credential,
      logger,
      metricsRegistry: metrics,
      consumerSpan: inConsumerSpan,
      requestId: currentRequestId,
    });
    const auth = createBearerAuth({
      authUrl: config.AUTH_URL,
      // Every audience this service issues: the caller reads `aud` in the answer and keeps what is its own.
      audience: [
        config.PLANT_STORE_AUDIENCE,
        config.ACCOUNT_ADMIN_AUDIENCE,
        ...listOf(config.API_AUDIENCES),
      ],
      jwksBaseUrl: internalUrl,
      internalToken: this.credential,
      realm: 'token-introspection',
      logger,
      requestId: currentRequestId,
      revocation,
    });
    this.#running = { auth, revocation };
    await revocation.start();
  }

  inspect(token: string): Promise<Principal> {
    if (this.#running === undefined)
      return Promise.reject(
        new ServiceUnavailable('Token introspection is starting; retry', {
          headers: { 'retry-after': '1' },
          expose: true,
        }),
      );
    return this.#running.auth.inspect(token);
  }

  /** True once the revocation snapshot has loaded (readiness). */
  isReady(): boolean {
    return this.#running?.revocation.isReady() ?? false;
  }

  async stop(): Promise<void> {
    const running = this.#running;
    if (running === undefined) return;
    await running.revocation.stop();
    running.auth.close();
  }
}
