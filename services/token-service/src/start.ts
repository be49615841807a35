/**
 * The token service process: load config, connect, listen on the public and the internal
 * port, log `listening` once; SIGTERM/SIGINT drain both listeners, then close pools and Redis.
 */
import { runServiceMain, startWebServer } from '@plant/shared';
import { loadTokenServiceConfig } from './config.js';
import { createTokenService } from './token-service.js';

runServiceMain('token-service', () => loadTokenServiceConfig(), async (config, logger) => {
  const service = await createTokenService(config, logger);
  const publicServer = await startWebServer(service.publicApp, { port: config.PORT, host: config.HOST });
  const internalServer = await startWebServer(service.internalApp, { port: config.INTERNAL_PORT, host: config.HOST });
  return {
    port: publicServer.port,
    internalPort: internalServer.port,
    async stop() {
      await Promise.all([publicServer.close(), internalServer.close()]);
      await service.close();
    },
  };
});
