/**
 * Entry point of the token-service process (`node dist/start.js`). Tracing starts first, when the
 * `OTEL_*` variables ask for it, so that express, pg and ioredis load after the instrumentation
 * hook is registered; the service itself (main.ts) is imported only then.
 */
import { startTracing } from '@plant/shared/tracing';

await startTracing('token-service');
await import('./main.js');
