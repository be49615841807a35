/**
 * createHttpApp's two ways to one route: a hot route (matched before express) and its express
 * twin (/items/, another spelling, HEAD) answer, log and count alike, whatever the handlers do.
 */
import { describe, expect, it } from '@jest/globals';
import { CASES, observe, useTestApp } from './helpers/http-app-harness.js';

useTestApp();

describe('a hot route and its express twin', () => {
  it.each(CASES)(
    'When %s reaches /items and /items/, then both answer, log and count alike, one of them hot',
    async (_name, method, query, body) => {
      const hot = await observe(method, `/items${query}`, body);
      const viaExpress = await observe(method, `/items/${query}`, body);

      expect({ hot: hot.way, viaExpress: viaExpress.way }).toEqual({
        hot: 'hot',
        viaExpress: 'express',
      });
      expect({ ...viaExpress, way: undefined }).toEqual({ ...hot, way: undefined });
      expect(hot.answer.idEchoed).toBe(true);
      expect(hot.answer.headers['x-layer']).toBeUndefined();
      expect(hot.logged.filter((l) => l.msg !== 'unexpected error')).toEqual([
        {
          level: hot.answer.status >= 500 ? 'error' : 'info',
          msg: expect.stringMatching(/^request (completed|failed)$/),
          method,
          res: { status: hot.answer.status },
        },
      ]);
      expect(hot.metrics).toEqual([
        `method="${method}",route="/items",status="${hot.answer.status}" +1`,
      ]);
    },
  );

  it('When the handlers answer, fail, throw or pass on, then the statuses are those of the Error shape', async () => {
    const statuses = [];
    for (const [, method, query, body] of CASES)
      statuses.push((await observe(method, `/items${query}`, body)).answer.status);

    expect(statuses).toEqual([200, 500, 403, 401, 400, 403, 500, 201, 400, 415, 400]);
    expect(JSON.parse((await observe('GET', '/items?fail=sync')).answer.body)).toEqual({
      error: 500,
      message: 'Internal server error',
    });
    expect((await observe('GET', '/items?fail=sync')).logged).toContainEqual(
      expect.objectContaining({ msg: 'unexpected error', err: 'sync failure', method: 'GET' }),
    );
  });

  it('When a path has parameters, then the hot way and every spelling express reads alike get the same params and answer', async () => {
    const hot = await observe('GET', '/things/abc/detail');
    const spellings = [];
    for (const path of ['/things/abc/detail/', '/things/a%62c/detail', '/THINGS/abc/detail'])
      spellings.push(await observe('GET', path));

    expect(hot.way).toBe('hot');
    expect(JSON.parse(hot.answer.body)).toEqual({
      params: { id: 'abc' },
      body: null,
      idInContext: true,
    });
    expect(hot.metrics).toEqual(['method="GET",route="/things/:id/detail",status="200" +1']);
    for (const other of spellings) expect(other).toEqual({ ...hot, way: 'express' });
  });

  it('When HEAD asks for a hot GET route, then express answers with the GET answer without its body', async () => {
    const get = await observe('GET', '/items');
    const head = await observe('HEAD', '/items');

    expect(head.way).toBe('express');
    expect(head.answer).toEqual({ ...get.answer, body: '' });
  });

  it('When a hot route passes other methods on, then its path is served by the later layer, and the hot way matches exactly', async () => {
    const hot = await observe('POST', '/relay/abc');
    const encoded = await observe('POST', '/relay/a%62c');
    const mounted = await observe('GET', '/relay/abc');

    expect([hot.way, encoded.way]).toEqual(['hot', 'express']);
    expect({ ...encoded, way: 'hot' }).toEqual(hot);
    expect(mounted.answer).toMatchObject({
      status: 299,
      body: '{"mounted":true}',
      headers: { 'x-layer': 'ran' },
    });
  });
});
