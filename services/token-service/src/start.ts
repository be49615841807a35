/**
 * The token service process: load config, connect, listen on the public, the internal and the
 * management port, log `listening` once; SIGTERM/SIGINT drain the listeners, then close pools and Redis.
 */
import { runServiceMain, startWebServer } from '@plant/shared';
import { loadTokenServiceConfig } from './config.js';
import { createTokenService } from './token-service.js';

runServiceMain('token-service', () => loadTokenServiceConfig(), async (config, logger) => {
  const service = await createTokenService(config, logger);
  const publicServer = await startWebServer(service.publicApp, { port: config.PORT, host: config.HOST });
  const internalServer = await startWebServer(service.internalApp, { port: config.INTERNAL_PORT, host: config.HOST });
  const managementServer = await startWebServer(service.managementApp, { port: config.MANAGEMENT_PORT, host: config.MANAGEMENT_HOST });
  return {
    port: publicServer.port,
    internalPort: internalServer.port,
    managementPort: managementServer.port,
    async stop() {
      await Promise.all([publicServer.close(), internalServer.close()]);
      // Probes and the last scrape answer while the others drain.
      await managementServer.close();
      await service.close();
    },
  };
});
