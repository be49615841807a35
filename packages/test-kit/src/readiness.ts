/**
 * The one place tests and benchmarks ask a service process whether it is ready: where the
 * probe lives (`/readyz` on the management port, MANAGEMENT_PORT) is decided here only.
 */
import type { ServerProcess } from './service-process.js';
import { eventually } from './waiting.js';

/** The address of a process's readiness probe. */
export function readinessUrlOf(svc: Pick<ServerProcess, 'url' | 'managementUrl'>): string {
  // A server without a management port (a baseline of the bench) answers on its only one.
  return `${svc.managementUrl ?? svc.url}/readyz`;
}

/** True when its readiness probe answers 200 now. */
export async function isReady(svc: Pick<ServerProcess, 'url' | 'managementUrl'>): Promise<boolean> {
  try {
    const res = await fetch(readinessUrlOf(svc), { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Waits until its readiness probe answers 200; resolves with the milliseconds from its spawn to then. */
export async function waitReady(
  svc: Pick<ServerProcess, 'url' | 'managementUrl' | 'name' | 'spawnedAt'>,
  timeoutMs = 15_000,
): Promise<number> {
  await eventually(() => isReady(svc), `${svc.name} is ready`, timeoutMs);
  return Date.now() - svc.spawnedAt;
}
