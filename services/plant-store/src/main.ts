/**
 * The Plant Store process (imported by start.ts once tracing is set up): load config, connect, listen, log `listening` once;
 * SIGTERM/SIGINT drain in-flight requests, then close the revocation map and the pool.
 */
import { revocationSyncFromConfig } from '@plant/resource-auth';
import { createMetricsRegistry } from '@plant/shared/http';
import { currentRequestId } from '@plant/shared/logging';
import { runServiceMain } from '@plant/shared/service-main';
import { inConsumerSpan } from '@plant/shared/tracing';
import { loadPlantStoreConfig } from './config.js';
import { runPlantStore } from './plant-store.js';

runServiceMain(
  'plant-store',
  () => loadPlantStoreConfig(),
  async (config, logger) => {
    const metrics = createMetricsRegistry('plant-store');
    const revocation = revocationSyncFromConfig(config, {
      logger,
      metrics,
      consumerSpan: inConsumerSpan,
      requestId: currentRequestId,
    });
    return runPlantStore(config, logger, { revocation, metrics });
  },
);
