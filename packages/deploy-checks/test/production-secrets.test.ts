/**
 * In production a service refuses the development secrets this repository ships, and weak ones,
 * with one line naming the variable; development runs (pnpm start, compose, the dev overlay)
 * say they are development and keep working.
 */
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  ConfigError,
  DEVELOPMENT_SECRET_VALUES,
  loadConfig,
  productionSecretProblem,
  secretKeysOf,
  type ConfigShape,
} from '@plant/shared/config';
import { REPO_ROOT } from '@plant/test-kit';
import { CONFIG_SHAPES } from './helpers/service-configs.js';

const secretKeys = (shape: ConfigShape) =>
  secretKeysOf(shape as Parameters<typeof secretKeysOf>[0]);
// With the Secret's keys that hold a variable under another name (an internal API token: its caller's INTERNAL_API_TOKEN),
// and the passwords production refuses only when shipped (the sentinels').
const SECRET_KEYS = new Set([
  ...Object.values(CONFIG_SHAPES).flatMap(secretKeys),
  'PLANT_STORE_INTERNAL_TOKEN',
  'ACCOUNT_ADMIN_INTERNAL_TOKEN',
  'REDIS_SENTINEL_PASSWORD',
]);

/** Every value given to a key `wanted` accepts anywhere in a YAML file (compose anchors, Secret stringData). */
function yamlSecretValues(
  file: string,
  wanted: (key: string) => boolean = (key) => SECRET_KEYS.has(key),
): string[] {
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (wanted(key) && typeof value === 'string') found.push(value);
        else walk(value);
      }
    }
  };
  for (const doc of parseAllDocuments(readFileSync(join(REPO_ROOT, file), 'utf8')))
    walk(doc.toJS({ maxAliasCount: -1 }));
  return found;
}

const { DEV_ENV, DEV_INTERNAL_TOKENS, devEnv } = (await import(
  join(REPO_ROOT, 'scripts/dev-env.mjs')
)) as {
  DEV_ENV: Record<string, string>;
  DEV_INTERNAL_TOKENS: Record<string, string>;
  devEnv: (env: Record<string, string>, service: string) => Record<string, string>;
};
const shipped = [
  ...Object.entries(DEV_ENV)
    .filter(([k]) => SECRET_KEYS.has(k))
    .map(([, v]) => v),
  ...Object.values(DEV_INTERNAL_TOKENS),
  ...yamlSecretValues('docker-compose.yml'),
  ...yamlSecretValues('k8s/overlays/dev/secret.dev.yaml'),
];
const strong = () => randomBytes(32).toString('base64');

/** Connection URLs the repository ships (compose, the dev overlay's Secret) that carry a password. */
const isConnectionUrlKey = (key: string) => /(^|_)(DATABASE|REDIS)_URL$/.test(key);
const shippedUrls = [
  ...yamlSecretValues('docker-compose.yml', isConnectionUrlKey),
  ...yamlSecretValues('k8s/overlays/dev/secret.dev.yaml', isConnectionUrlKey),
].filter((url) => URL.parse(url)?.password);

describe('production secrets', () => {
  test('When a database or Redis URL carries a password this repository ships, then production refuses it, naming the variable; its own password passes', () => {
    expect(shippedUrls.length).toBeGreaterThanOrEqual(4);
    const shape = CONFIG_SHAPES['plant-store'];
    const strongEnv = Object.fromEntries(secretKeys(shape).map((k) => [k, strong()]));
    for (const url of shippedUrls) {
      const variable = url.startsWith('redis') ? 'REDIS_URL' : 'DATABASE_URL';
      expect(() =>
        loadConfig(shape, { ...strongEnv, [variable]: url, NODE_ENV: 'production' }),
      ).toThrow(`configuration error: ${variable} is a development value`);
      expect(() =>
        loadConfig(shape, { ...strongEnv, [variable]: url, NODE_ENV: 'development' }),
      ).not.toThrow();
    }
    const own = `redis://plant-store:${encodeURIComponent(strong())}@redis.example:6379`;
    expect(() =>
      loadConfig(shape, { ...strongEnv, REDIS_URL: own, NODE_ENV: 'production' }),
    ).not.toThrow();
  });

  test('When the repository ships a development secret, then production refuses it', () => {
    expect(shipped.length).toBeGreaterThanOrEqual(10);
    for (const value of shipped) {
      expect({
        value,
        listed: DEVELOPMENT_SECRET_VALUES.has(value),
        problem: productionSecretProblem(value),
      }).toEqual({ value, listed: true, problem: expect.stringContaining('development value') });
    }
  });

  test.each([
    ['a short token', 'x7Kq9v2LmP4rT8wZ'],
    ['hex of 16 bytes', randomBytes(16).toString('hex')],
    ['base64 of 24 bytes', randomBytes(24).toString('base64')],
    ['a sentence', 'correct horse battery staple'],
  ])('When a secret is %s, then production refuses it as too weak', (_what, value) => {
    expect(productionSecretProblem(value)).toContain('too weak');
  });

  test.each([
    ['base64 of 32 bytes', strong()],
    ['hex of 32 bytes', randomBytes(32).toString('hex')],
    ['base64url of 32 bytes', randomBytes(32).toString('base64url')],
  ])('When a secret is %s, then production accepts it', (_what, value) => {
    expect(productionSecretProblem(value)).toBeUndefined();
  });

  test.each(Object.keys(CONFIG_SHAPES))(
    'When %s loads the development values, then only NODE_ENV=production refuses them, naming a secret variable',
    (service) => {
      const shape = CONFIG_SHAPES[service as keyof typeof CONFIG_SHAPES];
      const DEV_ENV = devEnv({}, service);
      expect(() => loadConfig(shape, { ...DEV_ENV })).not.toThrow();
      let refused: unknown;
      try {
        loadConfig(shape, { ...DEV_ENV, NODE_ENV: 'production' });
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(ConfigError);
      expect(secretKeys(shape)).toContain((refused as ConfigError).variable);
      const strongEnv = Object.fromEntries(secretKeys(shape).map((k) => [k, strong()]));
      expect(() =>
        loadConfig(shape, { ...DEV_ENV, ...strongEnv, NODE_ENV: 'production' }),
      ).not.toThrow();
    },
  );

  test('When a list of keys holds one development value, then production refuses the list', () => {
    const shape = CONFIG_SHAPES['token-service'];
    const DEV_ENV = devEnv({}, 'token-service');
    const strongEnv = Object.fromEntries(secretKeys(shape).map((k) => [k, strong()]));
    expect(() =>
      loadConfig(shape, {
        ...DEV_ENV,
        ...strongEnv,
        COOKIE_KEYS: `${strong()},${DEV_ENV.COOKIE_KEYS}`,
        NODE_ENV: 'production',
      }),
    ).toThrow(/COOKIE_KEYS is a development value/);
  });

  test.each(Object.keys(CONFIG_SHAPES))(
    'When the built %s starts in production with the development values, then it exits 1 with one line naming the variable',
    (service) => {
      const run = spawnSync(
        process.execPath,
        [join(REPO_ROOT, 'services', service, 'dist/start.js')],
        {
          env: {
            PATH: process.env.PATH ?? '',
            ...devEnv({}, service),
            NODE_ENV: 'production',
            PORT: '0',
          },
          encoding: 'utf8',
          timeout: 20_000,
        },
      );
      expect(run.status).toBe(1);
      // Nothing else: on the pinned LTS oidc-provider does not warn about the runtime either.
      expect(run.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          /^configuration error: [A-Z_]+ is a development value from this repository; production needs a secret of its own$/,
        ),
      ]);
    },
  );
});
