/**
 * The platform as a cluster runs it, on this machine: every service as replicas (separate
 * processes, test-kit's launcher, each on a port of its own that it keeps across restarts)
 * behind the ingress, with the public URLs the ingress serves (AUTH_URL, PORTAL_URL,
 * PUBLIC_URL), TRUST_PROXY naming the ingress's address and no other, and the back channels
 * through the token service's Service stand-ins. Clients reach it through the ingress only.
 */
import type { Agent } from 'node:http';
import { httpRequest, signInClient, type Answer, type SignInClient } from '@plant/e2e';
import { platformPorts, startPlatform, type Platform, type PlatformOptions } from '@plant/test-kit';
import { INGRESS_ADDRESS } from './ingress-config.js';
import { startIngress, type Ingress } from './ingress.js';

export interface TopologyOptions {
  /** Replicas of each service (default 2). */
  replicas?: number;
  /** Options of the launcher (Redis, Postgres, environment) beside what the topology sets. */
  platform?: Omit<PlatformOptions, 'ports' | 'authUrl' | 'portalUrl'>;
}

/** A portal user's signed-in browser: its cookies and CSRF token. */
export interface PortalUser {
  cookie: string;
  csrf: string;
}

export interface Topology {
  platform: Platform;
  ingress: Ingress;
  /** Public base URLs through the ingress. */
  urls: { api: string; auth: string; portal: string };
  /** Keep-alive connections through the ingress from 127.0.0.1. */
  agent: Agent;
  /** Sign-in through the ingress (portal sessions, user tokens). */
  signIn: SignInClient;
  /** A call to the portal's REST API with a signed-in user's session. */
  portalApi(
    user: PortalUser,
    method: string,
    path: string,
    body?: unknown,
    requestId?: string,
  ): Promise<Answer>;
  /** The client credentials grant (client_secret_post) through the ingress. */
  grant(
    tenant: string,
    clientId: string,
    secret: string,
    options?: { agent?: Agent; requestId?: string },
  ): Promise<Answer>;
  listPlants(
    token: string,
    options?: { base?: string; requestId?: string; query?: string },
  ): Promise<Answer>;
  createPlant(
    token: string,
    plant: { id: string | number; name: string; tag?: string },
    options?: { base?: string; requestId?: string },
  ): Promise<Answer>;
  close(): Promise<void>;
}

/** A new tenant and its first Account Admin signed in to the portal through the ingress. */
export async function signedInTenant(
  t: Topology,
  prefix: string,
): Promise<{ tenant: string; admin: PortalUser }> {
  const tenant = await t.platform.createTenant(prefix);
  const session = await t.signIn.portalSession(tenant, `admin@${tenant}.test`);
  return { tenant, admin: { cookie: session.cookie, csrf: session.csrf } };
}

export async function startTopology({
  replicas = 2,
  platform: options = {},
}: TopologyOptions = {}): Promise<Topology> {
  const ports = await platformPorts({
    tokenServices: replicas,
    plantStores: replicas,
    accountAdmins: replicas,
  });
  const ingress = await startIngress(ports);
  const urls = {
    api: ingress.urlOf('plant-store'),
    auth: ingress.urlOf('token-service'),
    portal: ingress.urlOf('account-admin'),
  };
  let platform: Platform;
  try {
    platform = await startPlatform({
      ...options,
      ports,
      authUrl: urls.auth,
      portalUrl: urls.portal,
      serviceEnv: {
        ...options.serviceEnv,
        'token-service': { TRUST_PROXY: INGRESS_ADDRESS, ...options.serviceEnv?.['token-service'] },
        'plant-store': {
          PUBLIC_URL: urls.api,
          TOKEN_SERVICE_INTERNAL_URL: ingress.tokenServiceInternalUrl,
          ...options.serviceEnv?.['plant-store'],
        },
        'account-admin': {
          TRUST_PROXY: INGRESS_ADDRESS,
          TOKEN_SERVICE_INTERNAL_URL: ingress.tokenServiceInternalUrl,
          AUTH_INTERNAL_URL: ingress.tokenServiceUrl,
          ...options.serviceEnv?.['account-admin'],
        },
      },
    });
  } catch (err) {
    await ingress.stop();
    throw err;
  }
  const agent = ingress.agent();
  const traced = (requestId: string | undefined) =>
    requestId === undefined ? {} : { 'x-request-id': requestId };
  return {
    platform,
    ingress,
    urls,
    agent,
    signIn: signInClient({
      authUrl: urls.auth,
      portalUrl: urls.portal,
      hasPortal: () => true,
      agent,
    }),
    portalApi(user, method, path, body, requestId) {
      return httpRequest(`${urls.portal}${path}`, {
        method,
        agent,
        headers: {
          cookie: user.cookie,
          'x-csrf-token': user.csrf,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...traced(requestId),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    },
    grant(tenant, clientId, secret, { agent: via = agent, requestId } = {}) {
      return httpRequest(`${urls.auth}/realms/${tenant}/protocol/openid-connect/token`, {
        method: 'POST',
        agent: via,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...traced(requestId) },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: secret,
        }).toString(),
      });
    },
    listPlants(token, { base = urls.api, requestId, query = 'limit=1000' } = {}) {
      return httpRequest(`${base}/plants?${query}`, {
        agent,
        headers: { authorization: `Bearer ${token}`, ...traced(requestId) },
      });
    },
    createPlant(token, plant, { base = urls.api, requestId } = {}) {
      return httpRequest(`${base}/plants`, {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...traced(requestId),
        },
        // The id as a JSON number whatever its size (an int64 is exact on the wire).
        body: `{"id":${plant.id},"name":${JSON.stringify(plant.name)}${plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`}}`,
      });
    },
    async close() {
      await platform.close();
      await ingress.stop();
    },
  };
}
