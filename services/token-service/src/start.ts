import { createLogger, exitOnConfigError, onShutdownSignal, startWebServer } from '@plant/shared';
import { loadTokenServiceConfig, type TokenServiceConfig } from './config.js';
import { createTokenService } from './token-service.js';

let config: TokenServiceConfig;
try {
  config = loadTokenServiceConfig();
} catch (err) {
  exitOnConfigError(err);
}

const logger = createLogger({ name: 'token-service', level: config.LOG_LEVEL });
const service = await createTokenService(config, logger);
const publicServer = await startWebServer(service.publicApp, { port: config.PORT, host: config.HOST });
const internalServer = await startWebServer(service.internalApp, { port: config.INTERNAL_PORT, host: config.HOST });
logger.info({ port: publicServer.port, internalPort: internalServer.port }, 'listening');

onShutdownSignal(
  async () => {
    await Promise.all([publicServer.close(), internalServer.close()]);
    await service.close();
  },
  (msg) => logger.info(msg),
);
