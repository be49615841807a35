/**
 * Which addresses a trusted issuer's documents may be fetched from: global unicast only, an
 * IPv6 form that carries an IPv4 address judged by that address (a translator or tunnel on the
 * way would deliver the request there). Checked on the address a name resolves to, at connect
 * time; the DNS answer is the test's own (a resolver given to the fetch), the issuer a local one.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startWorkloadIssuer, type WorkloadIssuer } from '@plant/test-kit';
import {
  fetchIssuerJson,
  isNonPublicAddress,
  type Resolver,
} from '../src/client-auth/issuer-fetch.js';
import { IssuerFetchFailed } from '../src/platform/errors.js';

/** Each family of addresses that reaches our own network, with an example. */
const NON_PUBLIC: Array<[string, string]> = [
  ['NAT64 well-known prefix to link-local (metadata service)', '64:ff9b::a9fe:a9fe'],
  ['NAT64 well-known prefix to loopback', '64:ff9b::7f00:1'],
  ['NAT64 local-use prefix', '64:ff9b:1::a00:1'],
  ['NAT64 local-use prefix with a public IPv4 address', '64:ff9b:1::808:808'],
  ['6to4 to link-local', '2002:a9fe:a9fe::'],
  ['6to4 to private', '2002:c0a8:0101::1'],
  ['Teredo client on loopback (bit-inverted)', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
  ['Teredo server on private', '2001:0:a00:1:8000:63bf:f7f7:f7f7'],
  ['IPv4-compatible loopback', '::7f00:1'],
  ['IPv4-compatible private', '::10.0.0.1'],
  ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
  ['IPv4-translated private', '::ffff:0:a00:1'],
  ['site-local', 'fec0::1'],
  ['unique local', 'fd00::1'],
  ['link-local', 'fe80::1'],
  ['loopback', '::1'],
  ['unspecified', '::'],
  ['multicast', 'ff02::1'],
  ['documentation', '2001:db8::1'],
  ['discard-only', '100::1'],
  ['outside global unicast (2000::/3)', '4000::1'],
  ['IPv4 loopback', '127.0.0.1'],
  ['IPv4 private', '10.1.2.3'],
  ['IPv4 link-local', '169.254.169.254'],
  ['IPv4 shared (CGNAT)', '100.64.0.1'],
  ['IPv4 this network', '0.1.2.3'],
  ['IPv4 benchmarking', '198.18.0.1'],
];

/** Public addresses, in each form that carries one: still fetched. */
const PUBLIC: Array<[string, string]> = [
  ['IPv4', '8.8.8.8'],
  ['global unicast IPv6', '2606:4700:4700::1111'],
  ['NAT64 well-known prefix to a public address', '64:ff9b::808:808'],
  ['6to4 to a public address', '2002:808:808::1'],
  ['Teredo with public server and client', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
  ['IPv4-mapped public', '::ffff:8.8.8.8'],
];

/** A DNS answer of the test's own: every name resolves to `addresses`. */
function answering(...addresses: string[]): Resolver {
  return (_hostname, _options, callback) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
}

describe('the addresses a trusted issuer may have', () => {
  test.each(NON_PUBLIC)(
    'When an address is %s (%s), then it counts as non-public',
    (_family, address) => {
      expect(isNonPublicAddress(address)).toBe(true);
    },
  );

  test.each(PUBLIC)('When an address is %s (%s), then it counts as public', (_family, address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });
});

describe('connecting to a trusted issuer', () => {
  let issuer: WorkloadIssuer;

  beforeAll(async () => {
    issuer = await startWorkloadIssuer();
  });

  afterAll(() => issuer.close());

  /** The local issuer's discovery URL under a name of the test's own (resolved by the test's resolver). */
  const byName = () => {
    const url = new URL(`${issuer.issuer}/.well-known/openid-configuration`);
    url.hostname = 'issuer.test';
    return url.href;
  };

  test.each(NON_PUBLIC)(
    'When the issuer’s name resolves to %s (%s), then the fetch is refused before connecting',
    async (_family, address) => {
      const before = issuer.requests().discovery;

      const failure = await fetchIssuerJson(byName(), 10_000, {
        allowPrivate: false,
        allowHttp: true,
        timeoutMs: 3000,
        resolve: answering(address),
      }).catch((err: unknown) => err);

      expect(failure).toBeInstanceOf(IssuerFetchFailed);
      expect((failure as Error).message).toBe(
        'issuer.test resolves to a private or loopback address',
      );
      expect(issuer.requests().discovery).toBe(before);
    },
  );

  test('When one of the addresses a name resolves to is a NAT64 form of loopback, then the whole name is refused', async () => {
    const failure = await fetchIssuerJson(byName(), 10_000, {
      allowPrivate: false,
      allowHttp: true,
      timeoutMs: 3000,
      resolve: answering('8.8.8.8', '64:ff9b::7f00:1'),
    }).catch((err: unknown) => err);

    expect((failure as Error).message).toBe(
      'issuer.test resolves to a private or loopback address',
    );
  });

  test('When private issuers are allowed (development, tests) and the name resolves to loopback, then the document is fetched from the address resolved', async () => {
    const before = issuer.requests().discovery;

    const document = await fetchIssuerJson(byName(), 10_000, {
      allowPrivate: true,
      allowHttp: true,
      timeoutMs: 3000,
      resolve: answering('127.0.0.1'),
    });

    expect(document).toMatchObject({ issuer: issuer.issuer });
    expect(issuer.requests().discovery).toBe(before + 1);
  });
});
