/**
 * The pure parts of signing in and calling the API: RFC 8628's polling rules, the RFC 9470
 * challenge parser, DPoP proofs, and the files a sign-in leaves (0600, atomically written).
 */
import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { parseChallenge } from '../src/api/api-client.js';
import { afterPollError } from '../src/auth/device-grant.js';
import { DpopKey } from '../src/auth/dpop-key.js';
import { ProfileStore } from '../src/auth/profile-store.js';
import { configDir } from '../src/config-dir.js';

describe('device grant polling (RFC 8628 §3.5)', () => {
  test('When the realm says authorization_pending, slow_down, access_denied or expired_token, then plantctl waits, waits 5 s longer, or stops', () => {
    expect(afterPollError('authorization_pending', 5)).toEqual({
      next: 'poll',
      intervalSeconds: 5,
    });
    expect(afterPollError('slow_down', 5)).toEqual({ next: 'poll', intervalSeconds: 10 });
    expect(afterPollError('slow_down', 10)).toEqual({ next: 'poll', intervalSeconds: 15 });
    expect(afterPollError('access_denied', 5)).toMatchObject({ next: 'stop' });
    expect(afterPollError('expired_token', 5)).toMatchObject({ next: 'stop' });
    expect(afterPollError('invalid_grant', 5)).toMatchObject({ next: 'stop' });
  });
});

describe('the step-up challenge (RFC 9470)', () => {
  test('When the API answers insufficient_user_authentication, then its acr_values and max_age are read', () => {
    expect(
      parseChallenge(
        'Bearer error="insufficient_user_authentication", error_description="This action needs your second factor again", acr_values="urn:plantstore:acr:factor", max_age=600',
      ),
    ).toEqual({
      error: 'insufficient_user_authentication',
      error_description: 'This action needs your second factor again',
      acr_values: 'urn:plantstore:acr:factor',
      max_age: '600',
    });
  });
});

describe('the DPoP key and its files', () => {
  test('When a key is made, then its file is 0600 in a 0700 directory, and its proofs carry htm, htu without the query, ath and a fresh jti', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plantctl-key-'));
    const store = new ProfileStore(join(dir, 'config'));
    const key = await DpopKey.create(store.keyPath('acme'));
    expect((await stat(store.keyPath('acme'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'config', 'acme'))).mode & 0o777).toBe(0o700);
    expect(await readdir(join(dir, 'config', 'acme'))).toEqual(['dpop-key.json']);

    const loaded = await DpopKey.load(store.keyPath('acme'));
    const a = await loaded.proof('get', 'https://portal.example/api/v1/audit-events?limit=5', {
      accessToken: 'tok',
    });
    const b = await loaded.proof('get', 'https://portal.example/api/v1/audit-events');
    const header = decodeProtectedHeader(a);
    expect(header).toMatchObject({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.publicJwk });
    expect(header.jwk).not.toHaveProperty('d');
    expect(decodeJwt(a)).toMatchObject({
      htm: 'GET',
      htu: 'https://portal.example/api/v1/audit-events',
      ath: 'GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI',
    });
    expect(decodeJwt(a).jti).not.toBe(decodeJwt(b).jti);
  });

  test('When the key file is gone, then loading it says to sign in again (exit 3)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plantctl-key-'));
    await expect(DpopKey.load(join(dir, 'missing.json'))).rejects.toMatchObject({ exitCode: 3 });
  });

  test('When PLANTCTL_CONFIG_DIR is set, then it is the directory; else XDG_CONFIG_HOME/plantctl', () => {
    expect(configDir({ PLANTCTL_CONFIG_DIR: '/x/y' })).toBe('/x/y');
    if (process.platform !== 'win32')
      expect(configDir({ XDG_CONFIG_HOME: '/cfg' })).toBe('/cfg/plantctl');
  });

  test('When a tenant name could climb out of the directory, then it is refused', () => {
    const store = new ProfileStore('/tmp/plantctl-x');
    for (const bad of ['../etc', 'a/b', '', 'A'])
      expect(() => store.tokensPath(bad)).toThrow('Not a tenant name');
  });
});
