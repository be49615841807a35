/**
 * What a sign-in leaves in the config directory, per tenant (a profile):
 *
 *   config.json              which profile is current, and each one's tenant, portal and realm
 *   <tenant>/dpop-key.json   the private DPoP key (JWK, ES256), 0600, made at login
 *   <tenant>/tokens.json     the refresh token (bound to that key), the cached access token, 0600
 *
 * The refresh token is bound by DPoP (RFC 9449) to the key: the token service refuses it
 * without a proof signed by that key, so the tokens file copied alone is worth nothing. The key
 * never leaves this directory and is replaced at every login.
 */
import { join } from 'node:path';
import { CliError, EXIT } from '../exit-codes.js';
import { configDir, readJsonFile, removeFile, writePrivateFile } from '../config-dir.js';

/** Where a tenant's realm and API are, as discovery found them at login. */
export interface Profile {
  tenant: string;
  portal: string;
  /** The account-admin API's base, `{portal}/api/v1`. */
  api: string;
  /** The realm's issuer, `{auth_url}/realms/<tenant>`. */
  issuer: string;
  /** The public client plantctl signs in as. */
  clientId: string;
  /** The `resource` (RFC 8707) the access tokens are for: account-admin's audience. */
  audience: string;
  /** How the person signed in, so a step-up asks the same way. */
  method: 'device' | 'browser';
}

export interface StoredTokens {
  refresh_token?: string;
  access_token?: string;
  /** `Bearer` or `DPoP` (RFC 9449 §5). */
  token_type?: string;
  /** Epoch milliseconds. */
  access_expires_at?: number;
  scope?: string;
}

interface ConfigFile {
  current?: string;
  profiles: Record<string, Profile>;
}

export class ProfileStore {
  constructor(readonly dir: string = configDir()) {}

  private get configPath(): string {
    return join(this.dir, 'config.json');
  }

  keyPath(tenant: string): string {
    return join(this.dir, safeSegment(tenant), 'dpop-key.json');
  }

  tokensPath(tenant: string): string {
    return join(this.dir, safeSegment(tenant), 'tokens.json');
  }

  private async config(): Promise<ConfigFile> {
    return (await readJsonFile<ConfigFile>(this.configPath)) ?? { profiles: {} };
  }

  /** The named tenant's profile, or the current one; exit 3 when there is none. */
  async profile(tenant?: string): Promise<Profile> {
    const config = await this.config();
    const name = tenant ?? config.current;
    const profile = name === undefined ? undefined : config.profiles[name];
    if (profile === undefined)
      throw new CliError(
        name === undefined
          ? 'Not signed in: run plantctl login --tenant <tenant> --portal <url>'
          : `Not signed in to ${name}: run plantctl login --tenant ${name} --portal <url>`,
        EXIT.signInNeeded,
      );
    return profile;
  }

  async saveProfile(profile: Profile): Promise<void> {
    const config = await this.config();
    config.profiles[profile.tenant] = profile;
    config.current = profile.tenant;
    await writePrivateFile(this.configPath, `${JSON.stringify(config, null, 2)}\n`);
  }

  async forget(tenant: string): Promise<void> {
    const config = await this.config();
    delete config.profiles[tenant];
    if (config.current === tenant) config.current = Object.keys(config.profiles)[0];
    await writePrivateFile(this.configPath, `${JSON.stringify(config, null, 2)}\n`);
    await removeFile(this.tokensPath(tenant));
    await removeFile(this.keyPath(tenant));
  }

  async tokens(tenant: string): Promise<StoredTokens | undefined> {
    return readJsonFile<StoredTokens>(this.tokensPath(tenant));
  }

  async saveTokens(tenant: string, tokens: StoredTokens): Promise<void> {
    await writePrivateFile(this.tokensPath(tenant), `${JSON.stringify(tokens, null, 2)}\n`);
  }
}

/** The realms' name rule (the token service's): a tenant name is then a safe directory name too. */
export const TENANT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function safeSegment(tenant: string): string {
  if (!TENANT_NAME.test(tenant))
    throw new CliError(`Not a tenant name: ${JSON.stringify(tenant)}`, EXIT.usage);
  return tenant;
}
