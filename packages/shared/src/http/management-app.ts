/**
 * The management listener every service runs beside its public one, on a port of its own
 * (`MANAGEMENT_PORT`), as Keycloak serves its probes and metrics on 9000: `GET /healthz`,
 * `GET /readyz`, `GET /metrics`, and nothing else. The public port no longer routes these paths
 * (a 404 there, like any unknown path): route names, counts, heap sizes and which dependency is
 * down are for the kubelet and the monitoring namespace, not for whoever the ingress lets in.
 * A port of its own is what lets a NetworkPolicy tell the two apart (docs/deploy.md, "Trust
 * boundaries").
 */
import type { Registry } from 'prom-client';
import {
  aliveHandler,
  readinessHandler,
  registerReadinessMetric,
  type ReadinessCheck,
} from './health.js';
import { createHttpApp, type HttpApp } from './http-app.js';
import type { Logger } from '../logging/index.js';
import { metricsHandler } from './metrics.js';
import type { Route } from './route-table.js';

/** The paths only the management port serves. */
export const MANAGEMENT_PATHS = ['/healthz', '/readyz', '/metrics'] as const;

export interface ManagementAppOptions {
  logger: Logger;
  /** The service's registry, which `/metrics` exposes (the public listener records into it). */
  metrics: Registry;
  /** What `/readyz` checks, by the name its 503 gives. */
  readiness: Record<string, ReadinessCheck>;
}

/** The management port's table: the probes and the scrape. */
export function managementRoutes({
  metrics,
  readiness,
}: Pick<ManagementAppOptions, 'metrics' | 'readiness'>): Route[] {
  return [
    { method: 'GET', path: '/healthz', handlers: [aliveHandler] },
    { method: 'GET', path: '/readyz', handlers: [readinessHandler(readiness)] },
    { method: 'GET', path: '/metrics', handlers: [metricsHandler(metrics)] },
  ];
}

/**
 * The management port's listener, built the one way every listener is (`createHttpApp`): the
 * same 404, 405 and `Error` shape. No request metrics (a scrape would count itself) and no
 * forwarded-header trust (no proxy stands in front of it; nothing here reads the client's address).
 */
export function createManagementApp({ logger, metrics, readiness }: ManagementAppOptions): HttpApp {
  registerReadinessMetric(metrics, readiness);
  return createHttpApp({
    logger,
    requestContext: false,
    // Polled every few seconds, never worth a line; anything else asked here is logged (a 404 included).
    quietPaths: MANAGEMENT_PATHS,
    routes: managementRoutes({ metrics, readiness }),
  });
}
