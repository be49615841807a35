/**
 * Replicas stopped and started again under load, as a cluster does it: a crash (SIGKILL, the
 * process back at its address) or one step of a rolling update (the endpoint out of the pools,
 * the preStop delay, SIGTERM, the new process in once ready), optionally onto another build
 * (a rolling upgrade). Each gives the `FaultEvent` the fault report reads.
 */
import { sleep, waitReady, type ServiceName, type ServiceProcess } from '@plant/test-kit';
import type { FaultEvent } from './fault-report.js';
import type { Topology } from './topology-platform.js';

export const replicasOf = (t: Topology, service: ServiceName): ServiceProcess[] =>
  service === 'plant-store'
    ? t.platform.plantStores
    : service === 'token-service'
      ? t.platform.tokenServices
      : t.platform.accountAdmins;

/**
 * Stops the replica with `signal`, starts it again at its address (from `root`'s build when
 * given) and waits until it is ready.
 */
export async function cycleReplica(
  t: Topology,
  replica: ServiceProcess,
  signal: NodeJS.Signals,
  options: { root?: string } = {},
): Promise<FaultEvent> {
  const at = Date.now();
  await replica.stop(signal);
  const exitedAt = Date.now();
  const next = await t.platform.restart(replica, signal, options);
  const readyMs = await waitReady(next);
  return {
    service: next.service,
    replica: next.name,
    address: `127.0.0.1:${next.port}`,
    signal,
    at,
    exitedAt,
    spawnedAt: next.spawnedAt,
    readyMs,
  };
}

/**
 * The Deployments' preStop delay (k8s/base: 5 s), shorter here: long enough for a request the
 * ingress routed just before the endpoint left to reach the replica. Without it, such a request
 * can still sit in the listener's accept queue when SIGTERM closes the listener, and the kernel
 * resets it: a POST then fails (seen at a load average of 22; docs/deploy.md, "Scaling").
 */
const PRE_STOP_MS = 1000;

/**
 * One step of a rolling update, as a cluster takes it: the replica's endpoint leaves the
 * ingress's and the Services' pools, the preStop delay, SIGTERM (the service stops listening
 * and drains what it has); the new process (of `root`'s build when given) starts at the same
 * address and rejoins the pools once its readiness probe passes.
 */
export async function rollReplica(
  t: Topology,
  service: ServiceName,
  index: number,
  options: { root?: string } = {},
): Promise<FaultEvent> {
  t.ingress.removeEndpoint(service, index);
  await sleep(PRE_STOP_MS);
  const event = await cycleReplica(t, replicasOf(t, service)[index]!, 'SIGTERM', options);
  t.ingress.restoreEndpoint(service, index);
  return event;
}
