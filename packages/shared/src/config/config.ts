import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { productionSecretProblem, secretKey, secretValuesOf } from './production-secrets.js';
import { parseTrustProxy } from '../http/index.js';

/**
 * Configuration comes from environment variables only. A service describes its keys
 * as a zod object (one entry per variable, with its default and a `.describe()` doc
 * line); `loadConfig` validates them all and fails with one line naming the variable.
 *
 * Every key `X` may instead be given as `X_FILE`, a path whose content (trimmed) is the
 * value: Kubernetes and Docker mount secrets as files.
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`configuration error: ${variable} ${detail}`);
    this.name = 'ConfigError';
  }
}

export type ConfigShape = z.ZodRawShape;

function readEnv(shape: ConfigShape, env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const raw: Record<string, string | undefined> = {};
  for (const key of Object.keys(shape)) {
    const fileVar = `${key}_FILE`;
    const file = env[fileVar];
    if (file !== undefined && file !== '') {
      try {
        raw[key] = readFileSync(file, 'utf8').trim();
      } catch {
        throw new ConfigError(fileVar, `names a file that cannot be read`);
      }
    } else {
      const value = env[key];
      raw[key] = value === '' ? undefined : value;
    }
  }
  return raw;
}

/**
 * Validates every key; in production (`NODE_ENV=production`, as the images set it) every secret
 * key must also pass `productionSecretProblem`. Development runs say so with another NODE_ENV
 * (pnpm start and docker compose use `development`).
 */
export function loadConfig<S extends ConfigShape>(
  shape: S,
  env: NodeJS.ProcessEnv = process.env,
): z.output<z.ZodObject<S>> {
  const raw = readEnv(shape, env);
  const result = z.object(shape).safeParse(raw);
  if (result.success) {
    if (env.NODE_ENV === 'production') assertProductionSecrets(shape, result.data);
    return result.data;
  }
  const issue = result.error.issues[0]!;
  const variable = String(issue.path[0] ?? 'configuration');
  const given = raw[variable];
  const detail = given === undefined ? 'is required but not set' : `is invalid: ${issue.message}`;
  throw new ConfigError(variable, detail);
}

function assertProductionSecrets(shape: ConfigShape, values: Record<string, unknown>): void {
  for (const [key, schema] of Object.entries(shape)) {
    const checked = secretValuesOf(schema as z.ZodType, values[key]);
    for (const value of checked?.values ?? []) {
      const problem = productionSecretProblem(value, { shippedOnly: checked!.shippedOnly });
      if (problem !== undefined) throw new ConfigError(key, problem);
    }
  }
}

/** Describe each variable once; the same schema documents it (see `describeConfig`). */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  int: (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
    z.coerce.number().int().min(min).max(max).default(fallback),
  url: (fallback?: string) => (fallback === undefined ? z.url() : z.url().default(fallback)),
  string: (fallback?: string) =>
    fallback === undefined ? z.string().min(1) : z.string().min(1).default(fallback),
  /** A secret: no default, at least `min` characters; in production a strong value of its own (`productionSecretProblem`). */
  secret: (min = 16) =>
    secretKey(z.string().min(min, { error: `must be at least ${min} characters` })),
  /** Comma-separated secrets (key rotation: the first signs, all verify), each checked like `secret`. */
  secretList: (min = 16) =>
    secretKey(z.string().min(min, { error: `must be at least ${min} characters` }), { list: true }),
  /** As `secretList` for a feature that is off until given keys: empty by default; each key given is checked like `secret`. */
  optionalSecretList: (min = 32) =>
    secretKey(
      z
        .string()
        .default('')
        .refine((v) => v.split(',').every((key) => key.trim() === '' || key.trim().length >= min), {
          error: `each key must be at least ${min} characters`,
        }),
      { list: true },
    ),
  logLevel: () =>
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `TRUST_PROXY`: a hop count 0..10 or addresses and CIDR ranges (proxy-trust.ts). */
  trustProxy: () =>
    z
      .string()
      .default('0')
      .transform((value, ctx) => {
        try {
          return parseTrustProxy(value);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
          return z.NEVER;
        }
      }),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
};

/** Lines `NAME  default  doc` for a README table or `--help`. */
export function describeConfig(
  shape: ConfigShape,
): Array<{ name: string; default?: unknown; required: boolean; doc: string }> {
  return Object.entries(shape).map(([name, schema]) => {
    const s = schema as z.ZodType;
    const parsed = s.safeParse(undefined);
    return {
      name,
      default: parsed.success ? parsed.data : undefined,
      required: !parsed.success,
      doc: s.description ?? '',
    };
  });
}

/** For `start.ts`: print the one-line reason and stop. */
export function exitOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
