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
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { freePort, REPO_ROOT, startNginx, type PlatformPorts, type ServiceName } from '@plant/test-kit';
import { parse } from 'yaml';

/** The ingress controller's address towards the replicas: what `TRUST_PROXY` names. */
export const INGRESS_ADDRESS = '127.0.0.2';
/** The Services' stand-ins connect from here: not a trusted proxy. */
const SERVICE_ADDRESS = '127.0.0.3';
export const INGRESS_DOMAIN = 'plants.test';

export interface IngressRoute {
  host: string;
  path: string;
  service: ServiceName;
}

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
  accessLog(): AccessLine[];
  stop(): Promise<void>;
}

interface IngressRule {
  host: string;
  http: { paths: Array<{ path: string; pathType: string; backend: { service: { name: string } } }> };
}

/** The routes of `k8s/base/ingress.yaml`, each host turned into `<first label>.plants.test`. */
export function ingressRoutes(): { routes: IngressRoute[]; bodyLimit: string } {
  const ingress = parse(readFileSync(join(REPO_ROOT, 'k8s/base/ingress.yaml'), 'utf8')) as {
    metadata: { annotations?: Record<string, string> };
    spec: { rules: IngressRule[] };
  };
  const routes = ingress.spec.rules.flatMap((rule) =>
    rule.http.paths.map((p) => {
      if (p.pathType !== 'Prefix') throw new Error(`ingress path ${p.path}: only Prefix paths are rendered here`);
      return { host: `${rule.host.split('.')[0]}.${INGRESS_DOMAIN}`, path: p.path, service: p.backend.service.name as ServiceName };
    }),
  );
  return { routes, bodyLimit: ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size'] ?? '1m' };
}

const LOG_FORMAT = `log_format topology escape=json '{"at":$msec,"requestId":"$req_id","host":"$host","method":"$request_method","uri":"$request_uri","status":$status,"upstreams":"$upstream_addr","upstreamStatuses":"$upstream_status"}';`;

/** ingress-nginx's proxy settings for a location that routes to `upstream`. */
function proxyTo(upstream: string, { forwarded }: { forwarded: boolean }): string {
  return [
    `proxy_pass http://${upstream};`,
    'proxy_http_version 1.1;',
    'proxy_set_header Connection "";',
    `proxy_bind ${forwarded ? INGRESS_ADDRESS : SERVICE_ADDRESS};`,
    'proxy_connect_timeout 5s;',
    'proxy_read_timeout 60s;',
    // Retried on the next replica only on a connection error or timeout; POST only if nothing was sent (nginx's rule without non_idempotent).
    'proxy_next_upstream error timeout;',
    'proxy_next_upstream_tries 3;',
    ...(forwarded
      ? [
          'proxy_set_header Host $http_host;',
          'proxy_set_header X-Request-ID $req_id;',
          'proxy_set_header X-Real-IP $remote_addr;',
          'proxy_set_header X-Forwarded-For $remote_addr;',
          'proxy_set_header X-Forwarded-Proto $scheme;',
          'proxy_set_header X-Forwarded-Host $http_host;',
        ]
      : // A Service balances connections: the request reaches the replica as the client sent it, Host included.
        ['proxy_set_header Host $http_host;']),
  ].join('\n      ');
}

function upstreamBlock(name: string, ports: number[]): string {
  const servers = ports.map((port) => `server 127.0.0.1:${port} max_fails=1 fail_timeout=1s;`).join('\n    ');
  return `upstream ${name} {\n    ${servers}\n    keepalive 32;\n    keepalive_timeout 60s;\n  }`;
}

/** Starts nginx in front of the replicas on `ports` (they need not listen yet). */
export async function startIngress(ports: PlatformPorts): Promise<Ingress> {
  const { routes, bodyLimit } = ingressRoutes();
  const [port, tokenPublic, tokenInternal] = [await freePort(), await freePort(), await freePort()];
  const backends: Record<ServiceName, number[]> = {
    'token-service': ports['token-service'].map((p) => p.port),
    'plant-store': ports['plant-store'],
    'account-admin': ports['account-admin'],
  };
  const hosts = [...new Set(routes.map((r) => r.host))];
  const servers = hosts.map((host) => {
    const locations = routes
      .filter((r) => r.host === host)
      .map((r) => `    location ${r.path} {\n      ${proxyTo(r.service, { forwarded: true })}\n    }`)
      .join('\n');
    return `  server {\n    listen 127.0.0.1:${port};\n    server_name ${host};\n    client_max_body_size ${bodyLimit};\n${locations}\n  }`;
  });
  const http = [
    LOG_FORMAT,
    'access_log {dir}/access.log topology;',
    // The client's request id when it sent one (ingress-nginx's $req_id), else nginx's own.
    'map $http_x_request_id $req_id { default $http_x_request_id; "" $request_id; }',
    ...Object.entries(backends).map(([service, servicePorts]) => upstreamBlock(service, servicePorts)),
    upstreamBlock('token-service-internal', ports['token-service'].map((p) => p.internalPort)),
    ...servers,
    // Unknown hosts: 404, as ingress-nginx's default backend answers.
    `  server {\n    listen 127.0.0.1:${port} default_server;\n    return 404;\n  }`,
    // The Services' stand-ins log nothing: the access log holds what came through the ingress only.
    `  server {\n    listen 127.0.0.1:${tokenPublic};\n    access_log off;\n    location / {\n      ${proxyTo('token-service', { forwarded: false })}\n    }\n  }`,
    `  server {\n    listen 127.0.0.1:${tokenInternal};\n    access_log off;\n    location / {\n      ${proxyTo('token-service-internal', { forwarded: false })}\n    }\n  }`,
  ].join('\n  ');
  const nginx = await startNginx({ http, ports: [port, tokenPublic, tokenInternal] });
  const agents: Agent[] = [];
  const hostOf = (service: ServiceName) => routes.find((r) => r.service === service)!.host;
  return {
    port,
    routes,
    urlOf: (service) => `http://${hostOf(service)}:${port}`,
    tokenServiceUrl: `http://127.0.0.1:${tokenPublic}`,
    tokenServiceInternalUrl: `http://127.0.0.1:${tokenInternal}`,
    agent(localAddress) {
      const agent = new Agent({ keepAlive: true, maxSockets: 64, ...(localAddress === undefined ? {} : { localAddress }), lookup: resolveIngressHosts });
      agents.push(agent);
      return agent;
    },
    accessLog: () => nginx.accessLog().map(toAccessLine),
    async stop() {
      for (const agent of agents) agent.destroy();
      await nginx.stop();
    },
  };
}

function toAccessLine(line: string): AccessLine {
  const raw = JSON.parse(line) as Omit<AccessLine, 'upstreams' | 'upstreamStatuses' | 'at'> & { at: number; upstreams: string; upstreamStatuses: string };
  // nginx joins the replicas a request went to with ", " (and internal redirects with " : ").
  const list = (text: string) => (text === '' ? [] : text.split(/\s*,\s*|\s+:\s+/).filter((part) => part !== ''));
  return { ...raw, at: Math.round(raw.at * 1000), upstreams: list(raw.upstreams), upstreamStatuses: list(raw.upstreamStatuses) };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

/** `*.plants.test` is this machine; nothing else resolves (a typo fails instead of leaving it). */
function resolveIngressHosts(hostname: string, options: { all?: boolean }, callback: LookupCallback): void {
  if (!hostname.endsWith(`.${INGRESS_DOMAIN}`) && hostname !== '127.0.0.1') {
    callback(Object.assign(new Error(`${hostname} is not an ingress host`), { code: 'ENOTFOUND' }), '');
    return;
  }
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}
