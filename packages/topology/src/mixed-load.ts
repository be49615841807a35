/**
 * Mixed load through the ingress, as the seed's clients make it: grants, lists, creates and
 * secret resets, each worker a loop of its own, every request with a request id of its own
 * (nginx logs it with the replicas it went to). Beside them a prober keeps presenting every
 * revoked token whose revocation deadline has passed, through the ingress and straight to
 * each Plant Store replica: any acceptance is a revoked token accepted.
 */
import { httpRequest, type Answer } from '@plant/e2e';
import { sleep, uniqueName } from '@plant/test-kit';
import { signedInTenant, type PortalUser, type Topology } from './topology-platform.js';

export type LoadOp = 'grant' | 'list' | 'create' | 'reset';

/** One request of the load: what it was, when, and what came back (status 0: no answer at all). */
export interface LoadRequest {
  op: LoadOp;
  requestId: string;
  startedAt: number;
  endedAt: number;
  status: number;
  ok: boolean;
  /** What came back instead (the start of the body, or the connection error). */
  error?: string;
}

/**
 * How long after a reset's answer every replica must refuse the tokens it revoked: the
 * design's bound while a replica checks by lookups (their answers are reused up to 1 s);
 * with Redis up it takes milliseconds (docs/performance.md, revocation).
 */
export const REVOCATION_DEADLINE_MS = 1000;

export interface LoadAccounts {
  tenant: string;
  admin: PortalUser;
  /** An Edit service account the grant, list and create workers use (never reset). */
  editor: { clientId: string; secret: string };
  /** The account the reset worker rotates, over and over: its `secret` is updated at each acknowledged reset. */
  rotated: { clientId: string; secret: string };
}

/**
 * A tenant for the load: its admin signed in, an Edit service account and one to rotate, both
 * created through the portal API. Throws when the portal refuses.
 */
export async function loadAccounts(t: Topology, prefix: string): Promise<LoadAccounts> {
  const { tenant, admin } = await signedInTenant(t, prefix);
  const create = async (role: 'View' | 'Edit') => {
    const created = await t.portalApi(admin, 'POST', '/api/v1/service-accounts', {
      name: uniqueName('load'),
    });
    if (created.status !== 201)
      throw new Error(`create service account: ${created.status} ${created.text.slice(0, 200)}`);
    const { client_id: clientId, secret } = created.body as { client_id: string; secret: string };
    if (role === 'Edit') {
      const promoted = await t.portalApi(admin, 'PATCH', `/api/v1/service-accounts/${clientId}`, {
        role,
      });
      if (promoted.status !== 200) throw new Error(`promote service account: ${promoted.status}`);
    }
    return { clientId, secret };
  };
  return { tenant, admin, editor: await create('Edit'), rotated: await create('View') };
}

export interface MixedLoad {
  requests: LoadRequest[];
  /** Ids of plants whose create was answered 200. */
  acknowledgedIds: string[];
  revoked: Array<{ token: string; revokedAt: number }>;
  /** Each secret of the rotated account a reset answered 200 replaced, with that reset's request id: it must never work again. */
  retired: Array<{ secret: string; retiredAt: number; requestId: string }>;
  probes: { sent: number; accepted: Array<{ at: number; revokedAt: number; where: string }> };
  /** Stops every worker and waits for their last requests. */
  stop(): Promise<void>;
}

export interface MixedLoadOptions {
  /** Workers of each kind (default grant 2, list 3, create 2, reset 1). */
  workers?: Partial<Record<LoadOp, number>>;
  /** Pause of each worker between its requests (default 5 ms): a load that leaves the two cores room for the faults. */
  paceMs?: number;
}

export function startMixedLoad(
  t: Topology,
  accounts: LoadAccounts,
  { workers = {}, paceMs = 5 }: MixedLoadOptions = {},
): MixedLoad {
  const { tenant, admin, editor, rotated } = accounts;
  let running = true;
  let token: string | undefined;
  let nextId = BigInt(Date.now()) * 1000n;
  const load: MixedLoad = {
    requests: [],
    acknowledgedIds: [],
    revoked: [],
    retired: [],
    probes: { sent: 0, accepted: [] },
    stop: async () => undefined,
  };

  async function timed(
    op: LoadOp,
    send: (requestId: string) => Promise<Answer>,
    requestId = uniqueName(`topo-${op}`),
  ): Promise<Answer | undefined> {
    const expected = 200;
    const startedAt = Date.now();
    try {
      const res = await send(requestId);
      const ok = res.status === expected;
      load.requests.push({
        op,
        requestId,
        startedAt,
        endedAt: Date.now(),
        status: res.status,
        ok,
        ...(ok ? {} : { error: res.text.slice(0, 160) }),
      });
      return res;
    } catch (err) {
      load.requests.push({
        op,
        requestId,
        startedAt,
        endedAt: Date.now(),
        status: 0,
        ok: false,
        error: (err as Error).message,
      });
      return undefined;
    }
  }

  const grant = async () => {
    const res = await timed('grant', (requestId) =>
      t.grant(tenant, editor.clientId, editor.secret, { requestId }),
    );
    if (res?.status === 200) token = (res.body as { access_token: string }).access_token;
  };
  const list = async () => {
    if (token !== undefined)
      await timed('list', (requestId) => t.listPlants(token!, { requestId, query: 'limit=20' }));
  };
  const create = async () => {
    if (token === undefined) return;
    nextId += 1n;
    const id = nextId.toString();
    const res = await timed('create', (requestId) =>
      t.createPlant(token!, { id, name: 'Pilea peperomioides', tag: 'load' }, { requestId }),
    );
    if (res?.status === 200) load.acknowledgedIds.push(id);
  };
  /** A token of the rotated account, then resets until one reset is acknowledged: the token is revoked from that answer on. */
  const reset = async () => {
    const granted = await timed('grant', (requestId) =>
      t.grant(tenant, rotated.clientId, rotated.secret, { requestId }),
    );
    if (granted?.status !== 200) return;
    const victim = (granted.body as { access_token: string }).access_token;
    while (running) {
      const requestId = uniqueName('topo-reset');
      const res = await timed(
        'reset',
        () =>
          t.portalApi(
            admin,
            'POST',
            `/api/v1/service-accounts/${rotated.clientId}/reset-secret`,
            undefined,
            requestId,
          ),
        requestId,
      );
      if (res?.status === 200) {
        load.retired.push({ secret: rotated.secret, retiredAt: Date.now(), requestId });
        rotated.secret = (res.body as { secret: string }).secret;
        load.revoked.push({ token: victim, revokedAt: Date.now() });
        return;
      }
      await sleep(paceMs);
    }
  };
  const probe = async () => {
    const due = load.revoked
      .filter((r) => Date.now() > r.revokedAt + REVOCATION_DEADLINE_MS)
      .slice(-5);
    const targets = [
      { where: 'ingress', base: t.urls.api },
      ...t.platform.plantStores.map((store) => ({ where: store.name, base: store.url })),
    ];
    for (const { token: revokedToken, revokedAt } of due) {
      await Promise.all(
        targets.map(async ({ where, base }) => {
          const at = Date.now();
          // A replica being restarted refuses the connection: no answer, nothing accepted.
          const res = await httpRequest(`${base}/plants?limit=1`, {
            agent: t.agent,
            headers: { authorization: `Bearer ${revokedToken}` },
          }).catch(() => undefined);
          load.probes.sent += 1;
          if (res?.status === 200) load.probes.accepted.push({ at, revokedAt, where });
        }),
      );
    }
    await sleep(50);
  };

  const loop = async (step: () => Promise<void>) => {
    while (running) {
      await step();
      await sleep(paceMs);
    }
  };
  const counts = { grant: 2, list: 3, create: 2, reset: 1, ...workers };
  const loops = [
    ...Array.from({ length: counts.grant }, () => loop(grant)),
    ...Array.from({ length: counts.list }, () => loop(list)),
    ...Array.from({ length: counts.create }, () => loop(create)),
    ...Array.from({ length: counts.reset }, () => loop(reset)),
    loop(probe),
  ];
  load.stop = async () => {
    running = false;
    await Promise.all(loops);
  };
  return load;
}
