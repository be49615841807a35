/**
 * The seed's whole flow as a signed-in Account Admin and their automation drive it through the
 * ingress: the portal API, a service account (promoted to Edit), tokens, plants created and
 * listed, a secret reset, then the old token presented at every Plant Store replica directly
 * and through the ingress. Every answer is kept (with the request ids nginx logged) for the test
 * to assert; a step the next one needs throws when it fails.
 */
import type { Answer } from '@plant/e2e';
import { uniqueName } from '@plant/test-kit';
import type { PortalUser, Topology } from './topology-platform.js';

export interface SeedFlowAnswers {
  /** `GET /api/v1/me` with the session, six times (both replicas answer some). */
  me: Answer[];
  account: { client_id: string; secret: string; role: string };
  grants: Answer[];
  creates: Answer[];
  lists: Answer[];
  /** The plants created, in id order, as the API shows them. */
  plants: Array<{ name: string; tag: string }>;
  /** The old secret and the new one at the token endpoint after the reset. */
  oldSecret: Answer;
  newSecret: Answer;
  /** The old token after the reset: at each Plant Store replica directly, then twice through the ingress. */
  oldTokenDirect: Answer[];
  oldTokenViaIngress: Answer[];
  /** A token of the new secret at each replica. */
  newTokenDirect: Answer[];
  /** Request ids of each step, to find them in nginx's access log. */
  ids: { me: string[]; grants: string[]; plants: string[] };
}

function expectStatus(answer: Answer, status: number, what: string): Answer {
  if (answer.status !== status)
    throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
  return answer;
}

export async function runSeedFlow(
  t: Topology,
  tenant: string,
  admin: PortalUser,
): Promise<SeedFlowAnswers> {
  const ids = {
    me: Array.from({ length: 6 }, () => uniqueName('me')),
    grants: Array.from({ length: 4 }, () => uniqueName('grant')),
    plants: [] as string[],
  };
  const me = await Promise.all(
    ids.me.map((requestId) => t.portalApi(admin, 'GET', '/api/v1/me', undefined, requestId)),
  );
  const created = expectStatus(
    await t.portalApi(admin, 'POST', '/api/v1/service-accounts', { name: uniqueName('robot') }),
    201,
    'create service account',
  );
  const account = created.body as SeedFlowAnswers['account'];
  expectStatus(
    await t.portalApi(admin, 'PATCH', `/api/v1/service-accounts/${account.client_id}`, {
      role: 'Edit',
    }),
    200,
    'promote to Edit',
  );

  const grants = await Promise.all(
    ids.grants.map((requestId) =>
      t.grant(tenant, account.client_id, account.secret, { requestId }),
    ),
  );
  const token = (expectStatus(grants[0]!, 200, 'grant').body as { access_token: string })
    .access_token;
  const base = Date.now() * 1000;
  const plants = Array.from({ length: 4 }, (_, i) => ({ name: `Ficus ${i}`, tag: 'topology' }));
  const createIds = plants.map(() => uniqueName('create'));
  const creates = await Promise.all(
    plants.map((plant, i) =>
      t.createPlant(token, { id: base + i, ...plant }, { requestId: createIds[i]! }),
    ),
  );
  const listIds = [uniqueName('list'), uniqueName('list')];
  const lists = await Promise.all(listIds.map((requestId) => t.listPlants(token, { requestId })));
  ids.plants.push(...createIds, ...listIds);

  const reset = expectStatus(
    await t.portalApi(admin, 'POST', `/api/v1/service-accounts/${account.client_id}/reset-secret`),
    200,
    'reset secret',
  );
  const secret = (reset.body as { secret: string }).secret;
  const oldSecret = await t.grant(tenant, account.client_id, account.secret);
  const newSecret = await t.grant(tenant, account.client_id, secret);
  const stores = t.platform.plantStores;
  const oldTokenDirect = await Promise.all(
    stores.map((store) => t.listPlants(token, { base: store.url })),
  );
  const oldTokenViaIngress = [await t.listPlants(token), await t.listPlants(token)];
  const fresh = (
    expectStatus(newSecret, 200, 'grant with the new secret').body as { access_token: string }
  ).access_token;
  const newTokenDirect = await Promise.all(
    stores.map((store) => t.listPlants(fresh, { base: store.url })),
  );
  return {
    me,
    account,
    grants,
    creates,
    lists,
    plants,
    oldSecret,
    newSecret,
    oldTokenDirect,
    oldTokenViaIngress,
    newTokenDirect,
    ids,
  };
}
