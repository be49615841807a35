import { describe, expect, test } from '@jest/globals';
import { addressKey } from '@plant/shared/security';

describe('addressKey (the source a failure counter is kept for)', () => {
  test('When the address is IPv4, then it is its own key', () => {
    expect(['127.0.0.1', '10.1.2.3', '203.0.113.9'].map(addressKey)).toEqual([
      '127.0.0.1',
      '10.1.2.3',
      '203.0.113.9',
    ]);
  });

  test('When the address is IPv4-mapped IPv6, in either spelling, then it is the IPv4 address', () => {
    expect(
      ['::ffff:10.1.2.3', '::FFFF:10.1.2.3', '::ffff:a01:203', '0:0:0:0:0:ffff:0a01:0203'].map(
        addressKey,
      ),
    ).toEqual(Array(4).fill('10.1.2.3'));
  });

  test('When the address is IPv6, then every address of its /64 has one key, however it is spelled', () => {
    const sameNetwork = [
      '2001:db8:1:2::1',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:0DB8:0001:0002:0:0:0:0',
      '2001:db8:1:2:a:b:c:d%eth0',
      '2001:db8:1:2::10.0.0.1',
    ];

    expect(sameNetwork.map(addressKey)).toEqual(
      Array(sameNetwork.length).fill('2001:db8:1:2::/64'),
    );
    expect(addressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  test('When the value is not an address (a misconfigured proxy header, none at all), then all such values share one key', () => {
    expect(
      [
        '',
        'unknown',
        'not-an-ip',
        '1.2.3.4.5',
        '2001:db8::1::2',
        'x'.repeat(10_000),
        '::ffff:999.1.1.1',
      ].map(addressKey),
    ).toEqual(Array(7).fill('invalid'));
  });
});
