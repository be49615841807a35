/**
 * Which peers may tell a service the client's address and scheme (`X-Forwarded-For`, `-Proto`,
 * `-Host`). `TRUST_PROXY` is a hop count or a list of addresses and CIDR ranges:
 *  - a hop count trusts whoever connects to say what the last hops were, so any pod that can
 *    reach the port can forge its address and walk around every per-address limit: it is safe
 *    only where the network admits nothing but the proxy (the NetworkPolicy of k8s/);
 *  - ranges are checked against each hop: a header that arrives from any other address is
 *    dropped before anything reads it, whatever can reach the port.
 * With ranges the service rewrites the headers once, at the top of its listener, to what the
 * trusted hops vouch for (one client address; the scheme and host only from a trusted peer),
 * so express (`req.ip`) and oidc-provider's koa (`ctx.ip`) read the same answer by trusting one hop.
 */
import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';

export type TrustProxy = number | readonly string[];

/** The hop count, or the ranges: a comma-separated list (`10.0.0.0/8, 192.168.1.7`, or proxy-addr's names `loopback`, `uniquelocal`). */
export function parseTrustProxy(raw: string): TrustProxy {
  const text = raw.trim();
  if (/^[0-9]+$/.test(text)) {
    const hops = Number(text);
    if (hops > 10)
      throw new Error('must be a hop count from 0 to 10, or addresses and CIDR ranges');
    return hops;
  }
  const ranges = text
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (ranges.length === 0)
    throw new Error('must be a hop count from 0 to 10, or addresses and CIDR ranges');
  try {
    proxyAddr.compile(ranges);
  } catch {
    throw new Error(
      'must be a hop count from 0 to 10, or addresses and CIDR ranges (e.g. 10.0.0.0/8)',
    );
  }
  return ranges;
}

export interface ForwardedTrust {
  /** express's `trust proxy` setting, after `sanitize` has run. */
  express: number | false;
  /** oidc-provider's (koa's) `proxy` and `maxIpsCount`, after `sanitize` has run. */
  koa: { proxy: boolean; maxIpsCount: number };
  /** Rewrites the forwarded headers to what the trusted hops vouch for; absent when there is nothing to do. */
  sanitize?: (req: IncomingMessage) => void;
}

const FORWARDED = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'] as const;

export function forwardedTrust(trust: TrustProxy): ForwardedTrust {
  if (typeof trust === 'number')
    return { express: trust > 0 ? trust : false, koa: { proxy: trust > 0, maxIpsCount: trust } };
  const trusted = proxyAddr.compile([...trust]);
  return {
    express: 1,
    koa: { proxy: true, maxIpsCount: 1 },
    sanitize(req) {
      const { headers } = req;
      if (
        headers['x-forwarded-for'] === undefined &&
        headers['x-forwarded-proto'] === undefined &&
        headers['x-forwarded-host'] === undefined
      )
        return;
      if (!trusted(req.socket.remoteAddress ?? '', 0)) {
        for (const name of FORWARDED) delete headers[name];
        return;
      }
      if (headers['x-forwarded-for'] !== undefined)
        headers['x-forwarded-for'] = proxyAddr(req, trusted);
    },
  };
}

/**
 * The client's address under `trust`, as express's `req.ip` reads it (after `sanitize` has run),
 * for node-level handlers that run without express (a hot route).
 */
export function clientAddress(trust: TrustProxy): (req: IncomingMessage) => string {
  const hops = typeof trust === 'number' ? trust : 1;
  return (req) => proxyAddr(req, (_address, hop) => hop < hops);
}
