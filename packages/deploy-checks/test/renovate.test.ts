/**
 * renovate.json, offline: Renovate's own validator (`renovate-config-validator`) needs the
 * network and is not a dependency here, so the options this config uses are checked against a
 * schema of their own (a misspelt option is an error, not silently ignored as Renovate would),
 * and what the config is for is checked against the workspace's manifests: every OpenTelemetry
 * package in one group, oidc-provider never merged by a bot, the lockfile maintained.
 */
import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { repoRoot } from '../src/repo-paths.js';

interface PackageRule {
  description?: string;
  matchPackageNames: string[];
  groupName?: string;
  groupSlug?: string;
  automerge?: boolean;
  labels?: string[];
  prPriority?: number;
}
interface RenovateConfig {
  extends: string[];
  lockFileMaintenance: { enabled: boolean; schedule?: string[] };
  automerge?: boolean;
  packageRules: PackageRule[];
}

const schedule = { type: 'array', items: { type: 'string', minLength: 1 } };
/** The Renovate options this repository uses, with their types (docs.renovatebot.com/configuration-options). */
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['extends', 'lockFileMaintenance', 'packageRules'],
  properties: {
    $schema: { const: 'https://docs.renovatebot.com/renovate-schema.json' },
    extends: { type: 'array', items: { type: 'string' } },
    timezone: { type: 'string' },
    schedule,
    rangeStrategy: { enum: ['auto', 'pin', 'bump', 'replace', 'widen', 'update-lockfile'] },
    automerge: { type: 'boolean' },
    lockFileMaintenance: {
      type: 'object',
      additionalProperties: false,
      required: ['enabled'],
      properties: { enabled: { type: 'boolean' }, schedule, automerge: { type: 'boolean' } },
    },
    packageRules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['matchPackageNames'],
        properties: {
          description: { type: 'string' },
          matchPackageNames: { type: 'array', minItems: 1, items: { type: 'string' } },
          groupName: { type: 'string' },
          groupSlug: { type: 'string' },
          automerge: { type: 'boolean' },
          labels: { type: 'array', items: { type: 'string' } },
          prPriority: { type: 'integer' },
        },
      },
    },
  },
} as const;

const config = JSON.parse(readFileSync(join(repoRoot, 'renovate.json'), 'utf8')) as RenovateConfig;

/** Renovate's matchPackageNames: exact names, or globs where `**` (and `*`) match any run of characters. */
const matches = (pattern: string, name: string) =>
  pattern.includes('*')
    ? new RegExp(
        `^${pattern
          .split(/\*+/)
          .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
          .join('.*')}$`,
      ).test(name)
    : pattern === name;
const rulesFor = (name: string) =>
  config.packageRules.filter((r) => r.matchPackageNames.some((p) => matches(p, name)));

/** Every dependency named by a package.json of the workspace (root, packages, services, examples). */
function workspaceDependencies(): Set<string> {
  const manifests = ['.'];
  for (const dir of ['packages', 'services', 'examples'])
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true }))
      if (entry.isDirectory()) manifests.push(join(dir, entry.name));
  const names = new Set<string>();
  for (const dir of manifests) {
    let manifest: Record<string, Record<string, string> | undefined>;
    try {
      manifest = JSON.parse(readFileSync(join(repoRoot, dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies'])
      for (const name of Object.keys(manifest[field] ?? {})) names.add(name);
  }
  return names;
}

describe('renovate.json', () => {
  test('When its shape is validated, then every option is one Renovate knows, with the right type', () => {
    const ajv = new Ajv({ allErrors: true });
    const valid = ajv.validate(SCHEMA, config);
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  test('When OpenTelemetry packages update, then every one the workspace uses is in the one group, and no other rule splits them', () => {
    const otel = [...workspaceDependencies()].filter((n) => n.startsWith('@opentelemetry/'));
    expect(otel.length).toBeGreaterThan(3);
    for (const name of otel)
      expect({ name, groups: rulesFor(name).map((r) => r.groupName) }).toEqual({
        name,
        groups: ['OpenTelemetry'],
      });
  });

  test('When oidc-provider updates, then its pull request is labelled for a review by hand and never automerged (the token service reaches into its internals)', () => {
    expect(workspaceDependencies().has('oidc-provider')).toBe(true);
    const rules = rulesFor('oidc-provider');
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({
      automerge: false,
      labels: expect.arrayContaining(['manual-review']),
    });
    expect(config.automerge ?? false).toBe(false);
  });

  test('When the lockfile ages, then Renovate refreshes it on a schedule (lock file maintenance)', () => {
    expect(config.lockFileMaintenance.enabled).toBe(true);
    expect(config.lockFileMaintenance.schedule?.length).toBeGreaterThan(0);
  });

  test('When an option is misspelt, then the shape check refuses it', () => {
    const ajv = new Ajv({ allErrors: true });
    expect(ajv.validate(SCHEMA, { ...config, lockfileMaintenance: { enabled: true } })).toBe(false);
    expect(
      ajv.validate(SCHEMA, {
        ...config,
        packageRules: [{ matchPackageNames: ['oidc-provider'], automerge: 'no' }],
      }),
    ).toBe(false);
  });
});
