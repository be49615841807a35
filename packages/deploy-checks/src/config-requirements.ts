import { describeConfig, type ConfigShape } from '@plant/shared/config';

/**
 * What a deployment must set for a service, computed from the service's own zod config
 * shape (never a copied list):
 * - `required`: no default;
 * - `loopbackDefaults`: the default is a URL on 127.0.0.1 (Postgres, Redis, the internal
 *   API): inside a container or a pod nothing of ours listens there;
 * - `localhostDefaults`: the default is a public URL on localhost (a browser on one
 *   machine): fine for compose on a laptop, wrong behind an ingress.
 */
export interface ConfigRequirements {
  keys: string[];
  required: string[];
  loopbackDefaults: string[];
  localhostDefaults: string[];
  defaults: Record<string, unknown>;
}

const urlHost = (value: unknown): string | undefined => {
  if (typeof value !== 'string' || !/^[a-z][a-z0-9+.-]*:\/\//.test(value)) return undefined;
  try {
    return new URL(value).hostname;
  } catch {
    return undefined;
  }
};

export function configRequirements(shape: ConfigShape): ConfigRequirements {
  const described = describeConfig(shape);
  const defaults: Record<string, unknown> = {};
  for (const d of described) if (!d.required) defaults[d.name] = d.default;
  return {
    keys: described.map((d) => d.name),
    required: described.filter((d) => d.required).map((d) => d.name),
    loopbackDefaults: described
      .filter((d) => urlHost(d.default) === '127.0.0.1')
      .map((d) => d.name),
    localhostDefaults: described
      .filter((d) => urlHost(d.default) === 'localhost')
      .map((d) => d.name),
    defaults,
  };
}

/** A variable counts as provided when it, or its `X_FILE` form (loadConfig reads files), is. */
export function missingVariables(needed: string[], provided: Iterable<string>): string[] {
  const have = new Set(provided);
  return needed.filter((name) => !have.has(name) && !have.has(`${name}_FILE`));
}
