import { describe, expect, test } from '@jest/globals';
import {
  createClientSecretDigester,
  generateClientSecret,
  isWellFormedClientSecret,
} from '../src/credentials/client-secrets.js';

const PEPPER = 'unit-test-pepper-0123456789-0123456789';

describe('client secrets', () => {
  test('When secrets are generated, then each has the prefix, 43 random base62 characters (≥ 256 bits) and a valid checksum, and they differ', () => {
    const secrets = Array.from({ length: 50 }, generateClientSecret);

    for (const secret of secrets) {
      expect(secret).toMatch(/^pss_[0-9A-Za-z]{49}$/);
      expect(isWellFormedClientSecret(secret)).toBe(true);
    }
    expect(new Set(secrets).size).toBe(50);
    expect(43 * Math.log2(62)).toBeGreaterThanOrEqual(256);
  });

  test('When one character of the random part or the checksum changes, then the checksum no longer matches', () => {
    const secret = generateClientSecret();
    const flip = (s: string, i: number) =>
      s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);

    expect(isWellFormedClientSecret(flip(secret, 10))).toBe(false);
    expect(isWellFormedClientSecret(flip(secret, secret.length - 1))).toBe(false);
    expect(isWellFormedClientSecret(`xxx_${secret.slice(4)}`)).toBe(false);
  });

  test('When a secret is compared with its digest, then only that secret matches, and the digest depends on the pepper', () => {
    const secret = generateClientSecret();
    const secrets = createClientSecretDigester(PEPPER);
    const otherPepper = createClientSecretDigester('another-pepper-0123456789-0123456789');
    const digest = secrets.digest(secret);

    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digest).not.toContain(secret.slice(4, 47));
    expect(secrets.matches(secret, digest)).toBe(true);
    expect(secrets.matches(generateClientSecret(), digest)).toBe(false);
    expect(otherPepper.matches(secret, digest)).toBe(false);
    expect(otherPepper.digest(secret)).not.toBe(digest);
  });
});
