/**
 * The ingress, on this machine: Debian's nginx configured from the Ingress of `k8s/base` (a
 * host per service, its paths, its annotations) the way ingress-nginx renders one, in front of
 * every replica of each service. Host names are the k8s hosts' first label under
 * `plants.test` (`api.plants.test`), resolved to loopback by the clients' agent only.
 *
 * Like ingress-nginx it sets `X-Forwarded-For` to the peer's address (a client's own header
 * is replaced, never appended to), `X-Forwarded-Proto`/`-Host`, `X-Real-IP` and `X-Request-ID`
 * (the client's, or one of its own), keeps connections to the replicas alive, and retries a
 * request on the next replica only where that is safe: on a connection error or timeout, and
 * for POST only when nothing was sent yet. It connects to the replicas from its own loopback
 * address (`INGRESS_ADDRESS`), so `TRUST_PROXY` can name exactly that hop.
 *
 * Two more listeners stand in for the cluster's Services of the token service (its public
 * port for account-admin's back channel, its internal API for the resource servers): plain
 * load balancing over its replicas, from another address, no forwarded headers.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { freePort, startNginx, type PlatformPorts, type ServiceName } from '@plant/test-kit';
import {
  drainedFlag,
  INGRESS_DOMAIN,
  ingressRoutes,
  renderIngressHttp,
  type IngressLayout,
  type IngressRoute,
} from './ingress-config.js';

/** One request as nginx logged it. */
export interface AccessLine {
  /** When nginx finished it, ms since the epoch. */
  at: number;
  requestId: string;
  host: string;
  method: string;
  uri: string;
  status: number;
  /** Every replica it was sent to, in order (`127.0.0.1:<port>`; a retry adds one). */
  upstreams: string[];
  upstreamStatuses: string[];
}

export interface Ingress {
  port: number;
  routes: IngressRoute[];
  /** A service's public base URL through the ingress (`http://api.plants.test:<port>`). */
  urlOf(service: ServiceName): string;
  /** The token service's public port and internal API, as the cluster's Services balance them. */
  tokenServiceUrl: string;
  tokenServiceInternalUrl: string;
  /** Keep-alive connections on which the ingress's host names resolve to loopback, from `localAddress` if given. */
  agent(localAddress?: string): Agent;
  /**
   * Takes a replica out of its service's pool, for the ingress and the Services' stand-ins
   * alike, as a cluster does with a terminating pod's endpoint (one replica of a service at a time).
   */
  removeEndpoint(service: ServiceName, index: number): void;
  restoreEndpoint(service: ServiceName, index: number): void;
  accessLog(): AccessLine[];
  /** nginx's error log lines (why it answered 502: a reset, a refused connection, …). */
  errorLog(): string[];
  stop(): Promise<void>;
}

/** Starts nginx in front of the replicas on `ports` (they need not listen yet). */
export async function startIngress(ports: PlatformPorts): Promise<Ingress> {
  const { routes, bodyLimit } = ingressRoutes();
  const [port, tokenPublic, tokenInternal] = [await freePort(), await freePort(), await freePort()];
  const layout: IngressLayout = {
    routes,
    bodyLimit,
    port,
    tokenPublic,
    tokenInternal,
    backends: {
      'token-service': { name: 'token-service', ports: ports['token-service'].map((p) => p.port) },
      'token-service-svc': {
        name: 'token-service-svc',
        ports: ports['token-service'].map((p) => p.port),
      },
      'token-service-internal': {
        name: 'token-service-internal',
        ports: ports['token-service'].map((p) => p.internalPort),
      },
      'plant-store': { name: 'plant-store', ports: ports['plant-store'] },
      'account-admin': { name: 'account-admin', ports: ports['account-admin'] },
    },
  };
  const http = renderIngressHttp(layout);
  const nginx = await startNginx({ http, ports: [port, tokenPublic, tokenInternal] });
  mkdirSync(join(nginx.dir, 'drained'));
  /** The token service's replicas are also behind its two Services. */
  const flagsOf = (service: ServiceName, index: number) =>
    [
      service,
      ...(service === 'token-service' ? ['token-service-svc', 'token-service-internal'] : []),
    ].map((backend) => join(nginx.dir, drainedFlag(backend, index)));
  const agents: Agent[] = [];
  const hostOf = (service: ServiceName) => routes.find((r) => r.service === service)!.host;
  return {
    port,
    routes,
    urlOf: (service) => `http://${hostOf(service)}:${port}`,
    tokenServiceUrl: `http://127.0.0.1:${tokenPublic}`,
    tokenServiceInternalUrl: `http://127.0.0.1:${tokenInternal}`,
    agent(localAddress) {
      const agent = new Agent({
        keepAlive: true,
        maxSockets: 64,
        ...(localAddress === undefined ? {} : { localAddress }),
        lookup: resolveIngressHosts,
      });
      agents.push(agent);
      return agent;
    },
    removeEndpoint(service, index) {
      for (const flag of flagsOf(service, index)) writeFileSync(flag, '');
    },
    restoreEndpoint(service, index) {
      for (const flag of flagsOf(service, index)) rmSync(flag, { force: true });
    },
    accessLog: () => nginx.accessLog().map(toAccessLine),
    errorLog: () => nginx.errorLog(),
    async stop() {
      for (const agent of agents) agent.destroy();
      await nginx.stop();
    },
  };
}

function toAccessLine(line: string): AccessLine {
  const raw = JSON.parse(line) as Omit<AccessLine, 'upstreams' | 'upstreamStatuses' | 'at'> & {
    at: number;
    upstreams: string;
    upstreamStatuses: string;
  };
  // nginx joins the replicas a request went to with ", " (and internal redirects with " : ").
  const list = (text: string) =>
    text === '' ? [] : text.split(/\s*,\s*|\s+:\s+/).filter((part) => part !== '');
  return {
    ...raw,
    at: Math.round(raw.at * 1000),
    upstreams: list(raw.upstreams),
    upstreamStatuses: list(raw.upstreamStatuses),
  };
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | Array<{ address: string; family: number }>,
  family?: number,
) => void;

/** `*.plants.test` is this machine; nothing else resolves (a typo fails instead of leaving it). */
function resolveIngressHosts(
  hostname: string,
  options: { all?: boolean },
  callback: LookupCallback,
): void {
  if (!hostname.endsWith(`.${INGRESS_DOMAIN}`) && hostname !== '127.0.0.1') {
    callback(
      Object.assign(new Error(`${hostname} is not an ingress host`), { code: 'ENOTFOUND' }),
      '',
    );
    return;
  }
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}
