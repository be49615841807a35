/**
 * Secret comparison takes a constant-time code path: proven by behaviour, not by timing
 * (timings are never asserted). `node:crypto` is observed, not replaced: every call goes
 * to the real `timingSafeEqual`, and the test records what it was given.
 */
import { beforeAll, describe, expect, jest, test } from '@jest/globals';
import * as realCrypto from 'node:crypto';

const comparisons: Array<{ left: number; right: number }> = [];
jest.unstable_mockModule('node:crypto', () => ({
  ...realCrypto,
  timingSafeEqual(a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) {
    comparisons.push({ left: a.byteLength, right: b.byteLength });
    return realCrypto.timingSafeEqual(a, b);
  },
}));

let secrets: typeof import('../../../services/token-service/src/credentials/client-secrets.js');
let constantTime: typeof import('../../shared/src/security/constant-time.js');
beforeAll(async () => {
  secrets = await import('../../../services/token-service/src/credentials/client-secrets.js');
  constantTime = await import('../../shared/src/security/constant-time.js');
});

describe('Client secret comparison (services/token-service/src/credentials/client-secrets.ts)', () => {
  test('When right, wrong, malformed, empty, huge or multibyte secrets are compared, then each comparison is one timingSafeEqual of two 32-byte digests and only the right secret matches', () => {
    const digester = secrets.createClientSecretDigester('e2e-pepper');
    const secret = secrets.generateClientSecret();
    const stored = digester.digest(secret);
    const presented = [
      secret,
      secrets.generateClientSecret(),
      `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`,
      secret.slice(0, 10),
      '',
      'x'.repeat(100_000),
      '🌵'.repeat(40),
      `${secret}\u0000`,
    ];

    const verdicts = presented.map((candidate) => {
      comparisons.length = 0;
      const matches = digester.matches(candidate, stored);
      return { matches, comparisons: [...comparisons] };
    });

    expect(verdicts).toEqual(
      presented.map((_, i) => ({ matches: i === 0, comparisons: [{ left: 32, right: 32 }] })),
    );
  });

  test('When a stored digest has the wrong length (a corrupt row), then the comparison refuses without calling timingSafeEqual with unequal lengths (which would throw)', () => {
    const digester = secrets.createClientSecretDigester('p');
    comparisons.length = 0;

    const matches = digester.matches(secrets.generateClientSecret(), 'abcd');

    expect({ matches, comparisons }).toEqual({ matches: false, comparisons: [] });
  });

  test('When internal tokens and CSRF tokens of any length are compared, then constantTimeEquals hashes both to 32 bytes first, so the comparison never depends on where they differ', () => {
    const pairs: Array<[string, string]> = [
      ['e2e-internal-token', 'e2e-internal-token'],
      ['e2e-internal-token', 'e2e-internal-tokeN'],
      ['e2e-internal-token', 'x'],
      ['', ''],
      ['a'.repeat(10_000), 'a'.repeat(10_000)],
    ];

    const verdicts = pairs.map(([a, b]) => {
      comparisons.length = 0;
      return { equal: constantTime.constantTimeEquals(a, b), comparisons: [...comparisons] };
    });

    expect(verdicts).toEqual(
      pairs.map(([a, b]) => ({ equal: a === b, comparisons: [{ left: 32, right: 32 }] })),
    );
  });
});
