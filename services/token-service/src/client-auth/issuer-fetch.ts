import { lookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { IssuerFetchFailed } from '../platform/index.js';

/** What a trusted issuer's documents may be fetched from, and how much they may cost. */
export interface IssuerFetchPolicy {
  /** Private, loopback, link-local and other non-public addresses (FEDERATION_ALLOW_PRIVATE_ISSUERS). */
  allowPrivate: boolean;
  /** http: URLs (FEDERATION_ALLOW_HTTP_ISSUERS; production refuses it). */
  allowHttp: boolean;
  /** The whole exchange, connection to last byte (FEDERATION_FETCH_TIMEOUT_MS). */
  timeoutMs: number;
  /** The name resolver whose answers are checked and connected to (default the system's; tests give a DNS answer of their own). */
  resolve?: Resolver;
}

/** Every address a name has (`dns.lookup` with `all`). */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, options, callback) =>
  lookup(hostname, options, callback);

/**
 * A public issuer is on a global unicast address; anything else would let a trust reach our
 * own network (SSRF). IPv6 forms that carry an IPv4 address are judged by that address, since
 * a translator or tunnel on the path delivers the request there: IPv4-mapped and -translated,
 * IPv4-compatible, NAT64 under the well-known prefix, 6to4 (its relay) and Teredo (its server
 * and its client, whose address is stored bit-inverted). Local-use NAT64 (64:ff9b:1::/48) is
 * refused whole: where its IPv4 address sits is the operator's choice, so it cannot be decoded.
 * Ranges come from ipaddr.js, whose registry tables are kept up to date for us.
 */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number];
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];

/** The IPv4 address in two 16-bit groups of an IPv6 address, bit-inverted for Teredo's client. */
function ipv4At(address: ipaddr.IPv6, group: number, inverted = false): ipaddr.IPv4 {
  const bytes = address.toByteArray().slice(group * 2, group * 2 + 4);
  return new ipaddr.IPv4(inverted ? bytes.map((b) => ~b & 0xff) : bytes);
}

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

function isPublicIPv6(address: ipaddr.IPv6): boolean {
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return isPublicIPv4(ipv4At(address, 6));
    case 'rfc6052':
      return address.match(WELL_KNOWN_NAT64) && isPublicIPv4(ipv4At(address, 6));
    case '6to4':
      return isPublicIPv4(ipv4At(address, 1));
    case 'teredo':
      return isPublicIPv4(ipv4At(address, 2)) && isPublicIPv4(ipv4At(address, 6, true));
    case 'unicast':
      if (address.match(IPV4_COMPATIBLE)) return isPublicIPv4(ipv4At(address, 6));
      return address.match(GLOBAL_UNICAST);
    default:
      return false;
  }
}

/** Whether an address is one a public issuer could not have (see above); anything not an IP address counts as non-public. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    // A form Node accepts and ipaddr.js does not: refused, never thrown inside a DNS callback.
    return true;
  }
  return parsed.kind() === 'ipv4'
    ? !isPublicIPv4(parsed as ipaddr.IPv4)
    : !isPublicIPv6(parsed as ipaddr.IPv6);
}

/** Why `url` may not be fetched under `policy` before any lookup, or undefined. */
export function urlProblem(
  url: URL,
  policy: Pick<IssuerFetchPolicy, 'allowHttp' | 'allowPrivate'>,
): string | undefined {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp))
    return policy.allowHttp ? 'must be an http(s) URL' : 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.hash !== '') return 'must not have a fragment';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && isIP(host) !== 0 && isNonPublicAddress(host))
    return 'is on a private or loopback address';
  return undefined;
}

/**
 * The resolver every fetch connects through: it checks each address a name resolves to, so
 * the address checked is the address connected to (no second lookup a DNS rebinding could
 * answer differently). A name with any non-public address is refused whole.
 */
export function checkedLookup(
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0)
        return callback(new IssuerFetchFailed(`${hostname} has no address`), '', 0);
      if (!allowPrivate && addresses.some((a) => isNonPublicAddress(a.address)))
        return callback(
          new IssuerFetchFailed(`${hostname} resolves to a private or loopback address`),
          '',
          0,
        );
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

function readCapped(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers['content-length'] ?? 0);
    if (declared > maxBytes)
      return reject(
        new IssuerFetchFailed(`answer of ${declared} bytes is over the ${maxBytes}-byte limit`),
      );
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
export async function fetchIssuerJson(
  target: string,
  maxBytes: number,
  policy: IssuerFetchPolicy,
): Promise<unknown> {
  const url = URL.parse(target);
  if (url === null) throw new IssuerFetchFailed('not a URL');
  const problem = urlProblem(url, policy);
  if (problem !== undefined) throw new IssuerFetchFailed(`${url.origin} ${problem}`);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  let deadline: NodeJS.Timeout | undefined;
  const body = await new Promise<Buffer>((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'GET',
        headers: { accept: 'application/json' },
        lookup: checkedLookup(policy.allowPrivate, policy.resolve ?? systemResolver),
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.destroy();
          reject(new IssuerFetchFailed(`answered ${res.statusCode}`));
          return;
        }
        readCapped(res, maxBytes).then(resolve, reject);
      },
    );
    deadline = setTimeout(
      () => req.destroy(new IssuerFetchFailed(`no complete answer within ${policy.timeoutMs} ms`)),
      policy.timeoutMs,
    );
    req.on('error', reject);
    req.end();
  })
    .catch((err: Error) =>
      Promise.reject(err instanceof IssuerFetchFailed ? err : new IssuerFetchFailed(err.message)),
    )
    .finally(() => clearTimeout(deadline));
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new IssuerFetchFailed('answer is not JSON');
  }
}
