/**
 * The account-admin process: load config, connect, listen, log `listening` once;
 * SIGTERM/SIGINT drain in-flight requests, then close the pool, Redis and the revocation map.
 */
import { createLogger, exitOnConfigError, onShutdownSignal } from '@plant/shared';
import { runAccountAdmin } from './account-admin.js';
import { loadAccountAdminConfig, type AccountAdminConfig } from './config.js';

async function main(): Promise<void> {
  let config: AccountAdminConfig;
  try {
    config = loadAccountAdminConfig();
  } catch (err) {
    exitOnConfigError(err);
  }
  const logger = createLogger({ name: 'account-admin', level: config.LOG_LEVEL });
  const running = await runAccountAdmin(config, logger);
  logger.info({ port: running.port }, 'listening');
  onShutdownSignal(
    async () => {
      await running.stop();
      logger.info('stopped');
    },
    (msg) => logger.info(msg),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`account-admin failed to start: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
