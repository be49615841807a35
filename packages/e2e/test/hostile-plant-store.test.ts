/**
 * Hostile input against the Plant Store process: generated bodies for POST /plants and
 * query strings and headers for GET /plants (HOSTILE_RUNS each, 2,000 by default), and
 * hand-written requests no HTTP library sends (header injection, short bodies).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import {
  assertHostile,
  bodyCase,
  headerSafe,
  hostileAnswerProblem,
  hostileString,
  HOSTILE_RUNS,
  HOSTILE_TIMEOUT_MS,
  httpRequest,
  NUMBER_LITERALS,
  queryText,
  rawRequest,
  shapedObjectText,
  startPlatformWithEditor,
  type Answer,
  type Platform,
  type ServiceAccount,
} from '../src/index.js';

let p: Platform;
let tenant: string;
let token: string;

beforeAll(async () => {
  let account: ServiceAccount;
  ({ p, tenant, account } = await startPlatformWithEditor('hp'));
  token = await p.grantToken(tenant, account);
}, 60_000);

afterAll(() => p?.close());

type Plant = { name: string; tag?: string };

/** Every plant of the token's tenant, following the Link headers. */
async function listAll(bearer: string): Promise<Plant[]> {
  const all: Plant[] = [];
  let url: string | undefined = `${p.plantStores[0]!.url}/plants?limit=1000`;
  while (url !== undefined) {
    const res: Answer = await httpRequest(url, { headers: { authorization: `Bearer ${bearer}` } });
    expect(res.status).toBe(200);
    all.push(...(res.body as Plant[]));
    const next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
    url =
      next === undefined
        ? undefined
        : `${p.plantStores[0]!.url}${new URL(next).pathname}${new URL(next).search}`;
  }
  return all;
}

const canonical = (plants: Plant[]) => plants.map((x) => JSON.stringify(x)).sort();

async function assertStillUp(): Promise<void> {
  const store = p.plantStores[0]!;
  expect(store.child.exitCode).toBeNull();
  expect(store.child.signalCode).toBeNull();
  const health = await httpRequest(`${store.managementUrl}/healthz`);
  expect(health.status).toBe(200);
}

const plantBody = shapedObjectText({
  id: fc.oneof(
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
    fc.constantFrom(...NUMBER_LITERALS),
  ),
  name: hostileString.map((s) => JSON.stringify(s)),
  tag: hostileString.map((s) => JSON.stringify(s)),
});

describe('Plant Store under hostile input', () => {
  test(
    'When POST /plants gets thousands of hostile bodies and content types, then no answer is 5xx or leaks internals, every error is the Error shape, the process stays up, and exactly the plants that got 200 are stored',
    async () => {
      const created: Plant[] = [];
      const statuses = new Map<number, number>();

      const sent = await assertHostile(bodyCase(plantBody), async (c) => {
        const answer = await httpRequest(`${p.plantStores[0]!.url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': c.contentType },
          body: c.body,
        });
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const problem = hostileAnswerProblem(answer, 'error');
        if (problem !== undefined) return problem;
        if (![200, 400, 409, 413, 415].includes(answer.status))
          return `unexpected status ${answer.status}`;
        if (answer.status === 200) created.push(answer.body as Plant);
        return undefined;
      });

      expect(sent).toBeGreaterThanOrEqual(HOSTILE_RUNS);
      // The generator must reach the server's every outcome, or the run proves little.
      expect([...statuses.keys()].sort()).toEqual(expect.arrayContaining([200, 400, 413, 415]));
      await assertStillUp();
      expect(canonical(await listAll(token))).toEqual(canonical(created));
    },
    HOSTILE_TIMEOUT_MS,
  );

  test(
    "When GET /plants gets thousands of hostile query strings and headers, then it answers 200 with this tenant's plants or a 400/401 Error, never 5xx, and nothing changes",
    async () => {
      const before = await listAll(token);
      const known = new Set(before.map((x) => JSON.stringify(x)));
      const headerCase = fc.record({
        query: queryText,
        auth: fc.oneof(
          { weight: 8, arbitrary: fc.constant(`Bearer ${token}`) },
          { weight: 1, arbitrary: hostileString.map((s) => headerSafe(`Bearer ${s}`)) },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              '',
              'Bearer',
              'Bearer ',
              `bearer ${token}`,
              `Bearer  ${token}`,
              `Bearer ${token}x`,
              `Bearer ${token.split('.').slice(0, 2).join('.')}.`,
              `Basic ${token}`,
              `Bearer ${token}, Bearer ${token}`,
            ),
          },
        ),
        extra: fc.dictionary(
          fc.constantFrom(
            'x-request-id',
            'x-forwarded-for',
            'x-tenant',
            'accept',
            'accept-charset',
            'range',
            'if-none-match',
            'cookie',
            'origin',
            'forwarded',
          ),
          hostileString.map(headerSafe),
          { maxKeys: 3 },
        ),
      });

      const sent = await assertHostile(headerCase, async (c) => {
        const answer = await httpRequest(`${p.plantStores[0]!.url}/plants?${c.query}`, {
          headers: { ...c.extra, authorization: c.auth },
        });
        const problem = hostileAnswerProblem(answer, 'error');
        if (problem !== undefined) return problem;
        if (![200, 400, 401, 431].includes(answer.status))
          return `unexpected status ${answer.status}`;
        if (answer.status === 200) {
          if (!Array.isArray(answer.body)) return 'a 200 that is not an array';
          const foreign = (answer.body as Plant[]).find((x) => !known.has(JSON.stringify(x)));
          if (foreign !== undefined)
            return `a plant not of this tenant: ${JSON.stringify(foreign)}`;
        }
        return undefined;
      });

      expect(sent).toBeGreaterThanOrEqual(HOSTILE_RUNS);
      await assertStillUp();
      expect(await listAll(token)).toEqual(before);
    },
    HOSTILE_TIMEOUT_MS,
  );

  test('When requests carry CR/LF in headers, malformed request lines, or bodies shorter than their Content-Length, then the process answers an Error (400, 413, 431) or closes, stays up, and nothing is stored', async () => {
    const before = await listAll(token);
    const port = p.plantStores[0]!.port;
    const post = (headers: string, body: string) =>
      `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n${headers}\r\n${body}`;
    const valid = JSON.stringify({ id: 424242, name: 'should not be stored' });
    const cases: Array<{ bytes: string; end?: boolean }> = [
      {
        bytes: post(
          `Content-Type: application/json\r\nContent-Length: ${valid.length + 50}\r\nConnection: close\r\n`,
          valid,
        ),
        end: true,
      },
      {
        bytes: post(
          `Content-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n`,
          valid,
        ),
      },
      {
        bytes: post(
          `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n`,
          `${valid.length.toString(16)}\r\n${valid}`,
        ),
        end: true,
      },
      {
        bytes: post(
          `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\nConnection: close\r\n`,
          `0\r\n\r\n`,
        ),
      },
      {
        bytes: post(
          `Content-Type: application/json\r\nContent-Length: -1\r\nConnection: close\r\n`,
          valid,
        ),
      },
      {
        bytes: post(
          `Content-Type: application/json\r\nContent-Length: 99999999999999999999\r\nConnection: close\r\n`,
          valid,
        ),
        end: true,
      },
      {
        bytes: post(
          `Content-Type: application/json\r\nX-Request-Id: a\rSet-Cookie: x=1\r\nContent-Length: ${valid.length}\r\nConnection: close\r\n`,
          valid,
        ),
      },
      {
        bytes: post(
          `Content-Type: application/json\r\nX-Bad\u0000Header: 1\r\nContent-Length: ${valid.length}\r\nConnection: close\r\n`,
          valid,
        ),
      },
      {
        bytes: post(
          `Content-Type: application/json\r\n Folded: continuation\r\nContent-Length: ${valid.length}\r\nConnection: close\r\n`,
          valid,
        ),
      },
      {
        bytes: `GET /plants?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\nX-Injected: 1\r\n\r\n`,
      },
      { bytes: `GET /plants?limit=\u0000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n` },
      { bytes: `GET /plants HTTP/9.9\r\nHost: x\r\nConnection: close\r\n\r\n` },
      { bytes: `\u00ff\u00fe\u0000\u0001 garbage\r\n\r\n` },
      { bytes: `GET ${'/a'.repeat(40_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n` },
      {
        bytes: `GET /plants HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\nConnection: close\r\n\r\n`,
      },
      {
        bytes: `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(valid)}\r\nContent-Length: 3\r\nConnection: close\r\n\r\n${valid}`,
      },
    ];

    const answers = [];
    for (const c of cases) answers.push(await rawRequest(port, c.bytes, { end: c.end }));
    const headWithHugeHeader = await rawRequest(
      port,
      `HEAD /plants HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\nConnection: close\r\n\r\n`,
    );

    for (const [i, answer] of answers.entries()) {
      // 0: the server closed an incomplete request without answering, which is all it can do.
      expect({ i, ok: [0, 400, 413, 431].includes(answer.status), status: answer.status }).toEqual({
        i,
        ok: true,
        status: answer.status,
      });
      // Node's parser refuses these before express; the shared web server still answers in the Error shape.
      if (answer.status !== 0)
        expect({ i, body: JSON.parse(answer.body) }).toEqual({
          i,
          body: { error: answer.status, message: expect.any(String) },
        });
    }
    // A HEAD answer never has a body, even when the parser refused the request.
    expect({ status: headWithHugeHeader.status, body: headWithHugeHeader.body }).toEqual({
      status: 431,
      body: '',
    });
    await assertStillUp();
    expect(await listAll(token)).toEqual(before);
  });
});
