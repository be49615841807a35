import { lookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** What a trusted issuer's documents may be fetched from, and how much they may cost. */
export interface IssuerFetchPolicy {
  /** Private, loopback, link-local and other non-public addresses (FEDERATION_ALLOW_PRIVATE_ISSUERS). */
  allowPrivate: boolean;
  /** http: URLs (FEDERATION_ALLOW_HTTP_ISSUERS; production refuses it). */
  allowHttp: boolean;
  /** The whole exchange, connection to last byte (FEDERATION_FETCH_TIMEOUT_MS). */
  timeoutMs: number;
}

/** A fetch refused or failed; `message` says why, for the operator's log (never shown to the client). */
export class IssuerFetchFailed extends Error {}

/** Addresses no public issuer has: a fetch there would reach our own network (SSRF). */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64]] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

/** Whether an address is one a public issuer could not have (IPv4-mapped IPv6 counts as its IPv4 address). */
export function isNonPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return NON_PUBLIC.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why `url` may not be fetched under `policy` before any lookup, or undefined. */
export function urlProblem(url: URL, policy: Pick<IssuerFetchPolicy, 'allowHttp' | 'allowPrivate'>): string | undefined {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) return policy.allowHttp ? 'must be an http(s) URL' : 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.hash !== '') return 'must not have a fragment';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && isIP(host) !== 0 && isNonPublicAddress(host)) return 'is on a private or loopback address';
  return undefined;
}

/**
 * The resolver every fetch connects through: it checks each address a name resolves to, so
 * the address checked is the address connected to (no second lookup a DNS rebinding could
 * answer differently). A name with any non-public address is refused whole.
 */
function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0) return callback(new IssuerFetchFailed(`${hostname} has no address`), '', 0);
      if (!allowPrivate && addresses.some((a) => isNonPublicAddress(a.address))) return callback(new IssuerFetchFailed(`${hostname} resolves to a private or loopback address`), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

function readCapped(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers['content-length'] ?? 0);
    if (declared > maxBytes) return reject(new IssuerFetchFailed(`answer of ${declared} bytes is over the ${maxBytes}-byte limit`));
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        res.destroy();
        reject(new IssuerFetchFailed(`answer is over the ${maxBytes}-byte limit`));
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks, size)));
    res.on('error', reject);
  });
}

/**
 * GET a JSON document of a trusted issuer: only the URLs the policy allows, only public
 * addresses unless allowed, no redirect followed, at most `maxBytes`, within the policy's
 * deadline for the whole exchange (a server that trickles bytes is cut off too). Rejects with
 * `IssuerFetchFailed` naming why.
 */
export async function fetchIssuerJson(target: string, maxBytes: number, policy: IssuerFetchPolicy): Promise<unknown> {
  const url = URL.parse(target);
  if (url === null) throw new IssuerFetchFailed('not a URL');
  const problem = urlProblem(url, policy);
  if (problem !== undefined) throw new IssuerFetchFailed(`${url.origin} ${problem}`);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  let deadline: NodeJS.Timeout | undefined;
  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = send(url, { method: 'GET', headers: { accept: 'application/json' }, lookup: checkedLookup(policy.allowPrivate), agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.destroy();
        reject(new IssuerFetchFailed(`answered ${res.statusCode}`));
        return;
      }
      readCapped(res, maxBytes).then(resolve, reject);
    });
    deadline = setTimeout(() => req.destroy(new IssuerFetchFailed(`no complete answer within ${policy.timeoutMs} ms`)), policy.timeoutMs);
    req.on('error', reject);
    req.end();
  })
    .catch((err: Error) => Promise.reject(err instanceof IssuerFetchFailed ? err : new IssuerFetchFailed(err.message)))
    .finally(() => clearTimeout(deadline));
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new IssuerFetchFailed('answer is not JSON');
  }
}
