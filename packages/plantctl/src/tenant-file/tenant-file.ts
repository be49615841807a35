/**
 * The tenant file: YAML read with `yaml`, checked against the JSON Schema published with the
 * package (`schema/tenant.schema.json`, the one editors validate with), then normalised into
 * what the plan compares: defaults filled in, grants as a sorted set of tags, each key known by
 * its RFC 7638 thumbprint, each delegation's scope as a sorted set.
 */
import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { parseDocument } from 'yaml';
import { type Quota, type Role, sameAudience } from '../api/resources.js';
import { CliError, EXIT } from '../exit-codes.js';

export const API_VERSION = 'plantctl.plantstore.dev/v1';

/** The schema file, beside dist/ and src/ alike. */
const SCHEMA_URL = new URL('../../schema/tenant.schema.json', import.meta.url);

export interface DesiredKey {
  thumbprint: string;
  /** What POST .../keys takes: exactly one of them. */
  body: { jwk: JWK } | { pem: string };
}

export interface DesiredTrust {
  issuer: string;
  subject: string;
  audience: string;
}

/** One permission to act for others: the target API and its scope values, sorted. */
export interface DesiredDelegation {
  audience: string;
  scope: string[];
}

export interface DesiredAccount {
  name: string;
  role: Role;
  /** Tags with edit, sorted, unique. */
  grants: string[];
  dpop_bound_access_tokens: boolean;
  receive_signals: boolean;
  quota: Quota | null;
  disabled: boolean;
  keys: DesiredKey[];
  trusts: DesiredTrust[];
  /**
   * The whole set, when the file gives one; absent: the account's delegations are not the
   * file's to manage (a file written before they could be declared never revokes them).
   */
  delegations?: DesiredDelegation[];
}

export interface TenantFile {
  tenant?: string;
  accounts: DesiredAccount[];
}

interface RawAccount {
  name: string;
  role?: Role;
  grants?: string[];
  dpop_bound_access_tokens?: boolean;
  receive_signals?: boolean;
  quota?: Quota | null;
  disabled?: boolean;
  keys?: Array<{ jwk?: JWK; pem?: string }>;
  trusts?: DesiredTrust[];
  delegations?: DesiredDelegation[];
}

let validator: ReturnType<Ajv2020['compile']> | undefined;

async function validate(value: unknown): Promise<ErrorObject[]> {
  if (validator === undefined) {
    const schema = JSON.parse(await readFile(SCHEMA_URL, 'utf8'));
    validator = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  }
  return validator(value) ? [] : (validator.errors ?? []);
}

export async function readTenantFile(path: string): Promise<TenantFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${path}: ${(error as Error).message}`, EXIT.usage);
  }
  return parseTenantFile(text, path);
}

export async function parseTenantFile(text: string, source = 'the file'): Promise<TenantFile> {
  const document = parseDocument(text, { uniqueKeys: true });
  if (document.errors.length > 0)
    throw new CliError(`${source}: ${document.errors[0]!.message}`, EXIT.usage);
  let value: unknown;
  try {
    // Aliases are bounded: nested ones would make a small file a huge value (a "billion laughs").
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new CliError(`${source}: ${(error as Error).message}`, EXIT.usage);
  }
  const errors = await validate(value);
  if (errors.length > 0)
    throw new CliError(
      `${source} does not match the schema:\n${errors
        .slice(0, 10)
        .map((e) => `  ${e.instancePath || '/'} ${e.message ?? ''}`)
        .join('\n')}`,
      EXIT.usage,
    );
  const raw = value as { tenant?: string; service_accounts: RawAccount[] };
  const accounts = await Promise.all(raw.service_accounts.map(normalise));
  assertUniqueNames(accounts, source);
  for (const account of accounts) assertUniqueAudiences(account, source);
  return { ...(raw.tenant === undefined ? {} : { tenant: raw.tenant }), accounts };
}

async function normalise(raw: RawAccount): Promise<DesiredAccount> {
  return {
    name: raw.name,
    role: raw.role ?? 'View',
    grants: [...new Set(raw.grants ?? [])].sort(),
    dpop_bound_access_tokens: raw.dpop_bound_access_tokens ?? false,
    receive_signals: raw.receive_signals ?? false,
    quota: raw.quota ?? null,
    disabled: raw.disabled ?? false,
    keys: await Promise.all((raw.keys ?? []).map((key) => desiredKey(raw.name, key))),
    trusts: raw.trusts ?? [],
    ...(raw.delegations === undefined
      ? {}
      : {
          delegations: raw.delegations.map((d) => ({
            audience: d.audience,
            scope: [...new Set(d.scope)].sort(),
          })),
        }),
  };
}

async function desiredKey(account: string, key: { jwk?: JWK; pem?: string }): Promise<DesiredKey> {
  try {
    if (key.jwk !== undefined)
      return {
        thumbprint: await calculateJwkThumbprint(key.jwk, 'sha256'),
        body: { jwk: key.jwk },
      };
    const jwk = createPublicKey(key.pem!).export({ format: 'jwk' }) as JWK;
    return { thumbprint: await calculateJwkThumbprint(jwk, 'sha256'), body: { pem: key.pem! } };
  } catch (error) {
    throw new CliError(`${account}: a key cannot be read: ${(error as Error).message}`, EXIT.usage);
  }
}

/** The name the platform compares: letter case and compatibility forms do not make another name. */
export function nameKey(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}

/** The API takes each audience once; the file is refused before the tenant is read. */
function assertUniqueAudiences(account: DesiredAccount, source: string): void {
  const seen: string[] = [];
  for (const { audience } of account.delegations ?? []) {
    if (seen.some((other) => sameAudience(other, audience)))
      throw new CliError(
        `${source}: ${JSON.stringify(account.name)} names the audience ${JSON.stringify(audience)} twice in its delegations`,
        EXIT.usage,
      );
    seen.push(audience);
  }
}

function assertUniqueNames(accounts: DesiredAccount[], source: string): void {
  const seen = new Set<string>();
  for (const { name } of accounts) {
    if (seen.has(nameKey(name)))
      throw new CliError(`${source}: the name ${JSON.stringify(name)} appears twice`, EXIT.usage);
    seen.add(nameKey(name));
  }
}
