/**
 * A signed-in tenant: its profile, its DPoP key and its tokens, and the three things done with
 * them — an access token for the next API call (refreshed with a proof when the cached one is
 * about to expire), a fresh sign-in when the API asks for a step-up (RFC 9470), and logout
 * (revocation, then the files go).
 */
import { CliError, EXIT } from '../exit-codes.js';
import { deviceGrant } from './device-grant.js';
import { discoverPortal, discoverRealm, type RealmMetadata } from './discovery.js';
import { DpopKey } from './dpop-key.js';
import { loopbackSignIn } from './loopback.js';
import type { Profile, ProfileStore, StoredTokens } from './profile-store.js';
import {
  asTokenResponse,
  OAuthError,
  postWithProof,
  type TokenResponse,
} from './token-endpoint.js';

/** An access token is refreshed this long before it expires, so it does not expire in flight. */
const EXPIRY_MARGIN_MS = 30_000;

export interface LoginOptions {
  tenant: string;
  portal: string;
  browser: boolean;
  open: boolean;
  tell: (line: string) => void;
}

export interface AccessToken {
  token: string;
  /** `DPoP` tokens go with a proof and the DPoP scheme; `Bearer` ones alone. */
  type: string;
}

export interface StepUpChallenge {
  acrValues?: string;
  maxAge?: number;
}

/** Signs in and stores the profile, a new key and the tokens; answers the profile. */
export async function login(store: ProfileStore, options: LoginOptions): Promise<Profile> {
  const portal = options.portal.replace(/\/+$/, '');
  const configuration = await discoverPortal(portal, options.tenant);
  const profile: Profile = {
    tenant: options.tenant,
    portal,
    api: configuration.api,
    issuer: configuration.issuer,
    clientId: configuration.client_id,
    audience: configuration.audience,
    method: options.browser ? 'browser' : 'device',
  };
  const realm = await discoverRealm(profile.issuer);
  // A new key per sign-in: whatever an older one signed is not carried over.
  const key = await DpopKey.create(store.keyPath(profile.tenant));
  const tokens = await signIn(profile, realm, key, { open: options.open, tell: options.tell });
  await store.saveTokens(profile.tenant, stored(tokens));
  await store.saveProfile(profile);
  return profile;
}

async function signIn(
  profile: Profile,
  realm: RealmMetadata,
  key: DpopKey,
  how: { open: boolean; tell: (line: string) => void } & StepUpChallenge,
): Promise<TokenResponse> {
  const common = {
    tokenEndpoint: realm.token_endpoint,
    clientId: profile.clientId,
    audience: profile.audience,
    key,
    tell: how.tell,
    ...(how.acrValues === undefined ? {} : { acrValues: how.acrValues }),
    ...(how.maxAge === undefined ? {} : { maxAge: how.maxAge }),
  };
  if (profile.method === 'browser')
    return loopbackSignIn({
      ...common,
      authorizationEndpoint: realm.authorization_endpoint,
      open: how.open,
    });
  if (realm.device_authorization_endpoint === undefined)
    throw new CliError(
      'This realm offers no device sign-in: use plantctl login --browser',
      EXIT.signInNeeded,
    );
  return deviceGrant({ ...common, deviceEndpoint: realm.device_authorization_endpoint });
}

function stored(tokens: TokenResponse, previous?: StoredTokens): StoredTokens {
  return {
    // A refresh that does not rotate keeps the refresh token it was given.
    refresh_token: tokens.refresh_token ?? previous?.refresh_token,
    access_token: tokens.access_token,
    token_type: tokens.token_type,
    access_expires_at: Date.now() + (tokens.expires_in ?? 60) * 1000,
    ...(tokens.scope === undefined ? {} : { scope: tokens.scope }),
  };
}

export class Session {
  private realm?: RealmMetadata;
  private keyLoaded?: DpopKey;

  constructor(
    readonly store: ProfileStore,
    readonly profile: Profile,
    private readonly tell: (line: string) => void,
  ) {}

  static async open(store: ProfileStore, tenant: string | undefined, tell: (line: string) => void) {
    return new Session(store, await store.profile(tenant), tell);
  }

  async key(): Promise<DpopKey> {
    this.keyLoaded ??= await DpopKey.load(this.store.keyPath(this.profile.tenant));
    return this.keyLoaded;
  }

  private async metadata(): Promise<RealmMetadata> {
    this.realm ??= await discoverRealm(this.profile.issuer);
    return this.realm;
  }

  /** The cached access token while it is fresh, else a refreshed one (`force`: refresh anyway). */
  async accessToken(force = false): Promise<AccessToken> {
    const tokens = await this.store.tokens(this.profile.tenant);
    if (tokens?.refresh_token === undefined && tokens?.access_token === undefined)
      throw new CliError(
        `Not signed in to ${this.profile.tenant}: run plantctl login`,
        EXIT.signInNeeded,
      );
    const fresh =
      !force &&
      tokens.access_token !== undefined &&
      (tokens.access_expires_at ?? 0) - EXPIRY_MARGIN_MS > Date.now();
    if (fresh) return { token: tokens.access_token!, type: tokens.token_type ?? 'Bearer' };
    return this.refresh(tokens);
  }

  private async refresh(tokens: StoredTokens): Promise<AccessToken> {
    if (tokens.refresh_token === undefined)
      throw new CliError('The sign-in has expired: run plantctl login', EXIT.signInNeeded);
    const key = await this.key();
    const body = await postWithProof(
      (await this.metadata()).token_endpoint,
      {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: this.profile.clientId,
        resource: this.profile.audience,
      },
      key,
    ).catch((error: unknown) => {
      if (error instanceof OAuthError)
        throw new CliError(
          `The sign-in is no longer valid (${error.code}): run plantctl login`,
          EXIT.signInNeeded,
        );
      throw error;
    });
    const next = stored(asTokenResponse(body), tokens);
    await this.store.saveTokens(this.profile.tenant, next);
    return { token: next.access_token!, type: next.token_type ?? 'Bearer' };
  }

  /** RFC 9470: the person signs in again, proving the factor the challenge asks for. */
  async stepUp(challenge: StepUpChallenge): Promise<void> {
    this.tell('This change needs your second factor again.');
    const tokens = await signIn(this.profile, await this.metadata(), await this.key(), {
      open: true,
      tell: this.tell,
      ...challenge,
    });
    await this.store.saveTokens(this.profile.tenant, stored(tokens));
  }

  /** Revokes the refresh token (RFC 7009) and removes the profile's files. */
  async logout(): Promise<void> {
    const tokens = await this.store.tokens(this.profile.tenant);
    const endpoint = (await this.metadata()).revocation_endpoint;
    if (tokens?.refresh_token !== undefined && endpoint !== undefined) {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: tokens.refresh_token,
          token_type_hint: 'refresh_token',
          client_id: this.profile.clientId,
        }).toString(),
      }).catch((error: Error) => {
        throw new CliError(`Cannot reach the realm to revoke the sign-in: ${error.message}`);
      });
      // RFC 7009 §2.2: 200 whether or not the token was still valid.
      if (!res.ok) throw new CliError(`The realm did not revoke the sign-in (${res.status})`);
    }
    await this.store.forget(this.profile.tenant);
  }
}
