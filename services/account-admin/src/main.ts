/**
 * The account-admin process (imported by start.ts once tracing is set up): load config, connect, listen, log `listening` once;
 * SIGTERM/SIGINT drain in-flight requests, then close the pool, Redis and the revocation map.
 */
import { runServiceMain } from '@plant/shared/service-main';
import { runAccountAdmin } from './account-admin.js';
import { loadAccountAdminConfig } from './config.js';

runServiceMain('account-admin', () => loadAccountAdminConfig(), runAccountAdmin);
