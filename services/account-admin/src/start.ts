/**
 * Entry point of the account-admin process (`node dist/start.js`). Tracing starts first, when the
 * `OTEL_*` variables ask for it, so that express, pg and ioredis load after the instrumentation
 * hook is registered; the service itself (main.ts) is imported only then.
 */
import { startTracing } from '@plant/shared/tracing';

await startTracing('account-admin');
await import('./main.js');
