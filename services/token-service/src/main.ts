/**
 * The token service process (imported by start.ts once tracing is set up): load config, connect, listen on the public, the internal and the
 * management port, log `listening` once; SIGTERM/SIGINT drain the listeners, then close pools and Redis.
 */
import { startWebServer } from '@plant/shared/http';
import { runServiceMain } from '@plant/shared/service-main';
import { loadTokenServiceConfig } from './config.js';
import { createTokenService } from './token-service.js';

/** Where this process reaches its own listener bound to `host`: loopback when bound to every address. */
function loopbackOf(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

runServiceMain(
  'token-service',
  () => loadTokenServiceConfig(),
  async (config, logger) => {
    const service = await createTokenService(config, logger);
    const publicServer = await startWebServer(service.publicApp, {
      port: config.PORT,
      host: config.HOST,
    });
    const internalServer = await startWebServer(service.internalApp, {
      port: config.INTERNAL_PORT,
      host: config.HOST,
    });
    const managementServer = await startWebServer(service.managementApp, {
      port: config.MANAGEMENT_PORT,
      host: config.MANAGEMENT_HOST,
    });
    // Introspection verifies through the internal API, as a resource server does: it needs it listening.
    await service.startIntrospection(`http://${loopbackOf(config.HOST)}:${internalServer.port}`);
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
  },
);
