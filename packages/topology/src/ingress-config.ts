/**
 * nginx's configuration for the ingress, rendered from `k8s/base/ingress.yaml` the way
 * ingress-nginx renders an Ingress (see ingress.ts for what it does and why).
 *
 * Endpoints come and go as in a cluster, without a reload: a replica whose file
 * `<dir>/drained/<service>-<index>` exists is out of its service's pool (a pod that is
 * terminating, or not ready), as ingress-nginx's balancer drops an endpoint. A reload would
 * close the clients' idle keep-alive connections, which a cluster's endpoint change never does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, type ServiceName } from '@plant/test-kit';
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

interface IngressRule {
  host: string;
  http: {
    paths: Array<{ path: string; pathType: string; backend: { service: { name: string } } }>;
  };
}

/** The routes of `k8s/base/ingress.yaml`, each host turned into `<first label>.plants.test`. */
export function ingressRoutes(): { routes: IngressRoute[]; bodyLimit: string } {
  const ingress = parse(readFileSync(join(REPO_ROOT, 'k8s/base/ingress.yaml'), 'utf8')) as {
    metadata: { annotations?: Record<string, string> };
    spec: { rules: IngressRule[] };
  };
  const routes = ingress.spec.rules.flatMap((rule) =>
    rule.http.paths.map((p) => {
      if (p.pathType !== 'Prefix')
        throw new Error(`ingress path ${p.path}: only Prefix paths are rendered here`);
      return {
        host: `${rule.host.split('.')[0]}.${INGRESS_DOMAIN}`,
        path: p.path,
        service: p.backend.service.name as ServiceName,
      };
    }),
  );
  return {
    routes,
    bodyLimit:
      ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size'] ?? '1m',
  };
}

/** A pool of replicas: the service's public ports, or the token service's internal ones. */
export interface Backend {
  name: string;
  ports: number[];
}

export interface IngressLayout {
  routes: IngressRoute[];
  bodyLimit: string;
  /** The ingress's one listener (every host), and the two Services' stand-ins. */
  port: number;
  tokenPublic: number;
  tokenInternal: number;
  /**
   * The ingress's pools, and the Services' of the token service (its public port, its internal
   * API): pools of their own, because nginx keeps idle connections per pool whatever address
   * opened them, and a connection the ingress opened must never carry a Service's request (nor
   * the other way round), or a replica would see the wrong peer.
   */
  backends: Record<ServiceName | 'token-service-svc' | 'token-service-internal', Backend>;
}

/** Where a replica's drained flag lives, relative to nginx's directory. */
export const drainedFlag = (backend: string, index: number) => `drained/${backend}-${index}`;

const LOG_FORMAT = `log_format topology escape=json '{"at":$msec,"requestId":"$req_id","host":"$host","method":"$request_method","uri":"$request_uri","status":$status,"upstreams":"$upstream_addr","upstreamStatuses":"$upstream_status"}';`;

/**
 * The upstreams of a backend: all its replicas, and all but each one. `max_fails=0`:
 * ingress-nginx does not take a replica out on a failed request (readiness does, in a
 * cluster); a refused connection moves the request on.
 */
function upstreams({ name, ports }: Backend): string[] {
  const block = (upstream: string, members: number[]) =>
    `upstream ${upstream} {\n    ${members.map((port) => `server 127.0.0.1:${port} max_fails=0;`).join('\n    ')}\n    keepalive 32;\n    keepalive_timeout 60s;\n  }`;
  return [
    block(name, ports),
    ...(ports.length > 1
      ? ports.map((_, i) =>
          block(
            `${name}-without-${i}`,
            ports.filter((__, j) => j !== i),
          ),
        )
      : []),
  ];
}

/** ingress-nginx's proxy settings for a location that routes to a backend's pool (one replica drained at a time). */
function proxyTo({ name, ports }: Backend, { forwarded }: { forwarded: boolean }): string {
  const pool = `$pool_${name.replace(/-/g, '_')}`;
  return [
    `set ${pool} ${name};`,
    ...(ports.length > 1
      ? ports.map(
          (_, i) => `if (-f {dir}/${drainedFlag(name, i)}) { set ${pool} ${name}-without-${i}; }`,
        )
      : []),
    `proxy_pass http://${pool};`,
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

/** The contents of nginx's `http { }` block (`{dir}`: nginx's directory). */
export function renderIngressHttp({
  routes,
  bodyLimit,
  port,
  tokenPublic,
  tokenInternal,
  backends,
}: IngressLayout): string {
  const hosts = [...new Set(routes.map((r) => r.host))];
  const servers = hosts.map((host) => {
    const locations = routes
      .filter((r) => r.host === host)
      .map(
        (r) =>
          `    location ${r.path} {\n      ${proxyTo(backends[r.service], { forwarded: true })}\n    }`,
      )
      .join('\n');
    return `  server {\n    listen 127.0.0.1:${port};\n    server_name ${host};\n    client_max_body_size ${bodyLimit};\n${locations}\n  }`;
  });
  const standIn = (listen: number, backend: Backend) =>
    `  server {\n    listen 127.0.0.1:${listen};\n    access_log off;\n    location / {\n      ${proxyTo(backend, { forwarded: false })}\n    }\n  }`;
  return [
    LOG_FORMAT,
    'access_log {dir}/access.log topology;',
    // The client's request id when it sent one (ingress-nginx's $req_id), else nginx's own.
    'map $http_x_request_id $req_id { default $http_x_request_id; "" $request_id; }',
    ...Object.values(backends).flatMap(upstreams),
    ...servers,
    // Unknown hosts: 404, as ingress-nginx's default backend answers.
    `  server {\n    listen 127.0.0.1:${port} default_server;\n    return 404;\n  }`,
    // The Services' stand-ins log nothing: the access log holds what came through the ingress only.
    standIn(tokenPublic, backends['token-service-svc']),
    standIn(tokenInternal, backends['token-service-internal']),
  ].join('\n  ');
}
