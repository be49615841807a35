/**
 * Postgres restarted under load. The platform runs on a private Postgres cluster of this
 * file (initdb into a temp dir, its own port), so stopping it disturbs nobody else.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { eventually, sleep } from '@plant/test-kit';
import {
  errorShapeProblem,
  httpRequest,
  oauthErrorProblem,
  startLoad,
  startPlatformWithEditor,
  type Answer,
  type Platform,
  type ServiceAccount,
} from '../src/index.js';

let p: Platform;
let tenant: string;
let account: ServiceAccount;
let token: string;

beforeAll(async () => {
  ({ p, tenant, account } = await startPlatformWithEditor('fp', {
    privatePostgres: true,
    plantStores: 1,
  }));
  token = await p.grantToken(tenant, account);
}, 120_000);

afterAll(() => p?.close());

async function listedNames(): Promise<string[]> {
  const names: string[] = [];
  let url: string | undefined = `${p.plantStores[0]!.url}/plants?limit=1000`;
  while (url !== undefined) {
    const res: Answer = await httpRequest(url, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    names.push(...(res.body as Array<{ name: string }>).map((x) => x.name));
    const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
    url =
      next === undefined
        ? undefined
        : `${p.plantStores[0]!.url}${new URL(next).pathname}${new URL(next).search}`;
  }
  return names;
}

describe('Postgres restarted during load', () => {
  test('When Postgres stops and starts while plants are created and tokens granted, then requests get 200 or a 503 in the documented shape (never a 500 or a dropped connection), the processes reconnect by themselves, and every plant that got 200 is listed', async () => {
    const store = p.plantStores[0]!;
    const pids = [store.child.pid, p.tokenService.child.pid];
    const plants = startLoad(6, async (worker, seq) => {
      const name = `fp-${worker}-${seq}`;
      const answer = await p.createPlant(token, { id: worker * 10_000_000 + seq + 1, name });
      return {
        status: answer.status,
        detail: {
          name,
          problem: answer.status === 200 ? undefined : errorShapeProblem(answer),
          body: answer.text.slice(0, 200),
        },
      };
    });
    const grants = startLoad(2, async () => {
      const answer = await p.requestToken(tenant, account.clientId, account.secret);
      return {
        status: answer.status,
        detail: {
          problem: answer.status === 200 ? undefined : oauthErrorProblem(answer),
          body: answer.text.slice(0, 200),
        },
      };
    });

    let restartedAt = 0;
    try {
      await eventually(
        () => plants.outcomes.filter((o) => o.status === 200).length >= 20,
        'plants are created before the fault',
      );
      await p.postgres!.stop();
      await eventually(
        () => plants.outcomes.some((o) => o.status === 503),
        'the outage is seen',
        45_000,
      );
      await sleep(500);
      await p.postgres!.start();
      restartedAt = Date.now();
      await eventually(
        () =>
          plants.outcomes.filter((o) => o.startedAt > restartedAt && o.status === 200).length >=
            20 && grants.outcomes.some((o) => o.startedAt > restartedAt && o.status === 200),
        'requests succeed again after the restart',
        30_000,
      );
    } finally {
      await Promise.all([plants.stop(), grants.stop()]);
      if (restartedAt === 0) await p.postgres!.start().catch(() => undefined);
    }
    const [plantOutcomes, grantOutcomes] = [plants.outcomes, grants.outcomes];
    // Client credentials grants need no query while the client is cached: they may well stay 200 throughout.

    const unexpected = [...plantOutcomes, ...grantOutcomes].filter(
      (o) => ![200, 503].includes(o.status) || o.detail?.problem !== undefined,
    );
    expect(unexpected).toEqual([]);
    expect(
      plantOutcomes.filter((o) => o.status === 503).map((o) => JSON.parse(o.detail!.body)),
    ).toEqual(
      plantOutcomes
        .filter((o) => o.status === 503)
        .map(() => ({ error: 503, message: expect.any(String) })),
    );
    expect(
      grantOutcomes.filter((o) => o.status === 503).map((o) => JSON.parse(o.detail!.body).error),
    ).toEqual(grantOutcomes.filter((o) => o.status === 503).map(() => 'temporarily_unavailable'));
    expect([store.child.pid, p.tokenService.child.pid]).toEqual(pids);
    expect([store.child.exitCode, p.tokenService.child.exitCode]).toEqual([null, null]);
    const listed = new Set(await listedNames());
    const lost = plantOutcomes
      .filter((o) => o.status === 200 && !listed.has(o.detail!.name))
      .map((o) => o.detail!.name);
    expect(lost).toEqual([]);
  }, 180_000);
});
