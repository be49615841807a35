import { isIPv4, isIPv6 } from 'node:net';

/** The key of every value that is not an IP address: they share one budget rather than each getting a fresh one. */
const NOT_AN_ADDRESS = 'invalid';

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted IPv4 part becomes the last two). */
function groupsOf(ipv6: string): number[] {
  const [head = '', tail] = ipv6.split('::');
  const parse = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [Number.parseInt(group, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/**
 * The source address a failure counter is kept for. An IPv4 address is itself; IPv4-mapped
 * IPv6 (`::ffff:a.b.c.d`, what a dual-stack listener reports for IPv4 clients) is that IPv4
 * address. Any other IPv6 address counts as its /64: one subscriber is routinely handed a
 * whole /64, so keying the full address would give it 2^64 fresh budgets.
 */
export function addressKey(ip: string): string {
  if (isIPv4(ip)) return ip;
  const address = ip.replace(/%.*$/, '');
  if (!isIPv6(address)) return NOT_AN_ADDRESS;
  const groups = groupsOf(address.toLowerCase());
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
