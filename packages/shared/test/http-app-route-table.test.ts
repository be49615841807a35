/**
 * createHttpApp's route table beyond the hot way: 405 with Allow for other methods, a route's
 * own onError, the table read back as data, and 404 for unknown paths, all in the Error shape.
 */
import { describe, expect, it } from '@jest/globals';
import { createHttpApp } from '../src/http/index.js';
import { logger, observe, table, useTestApp } from './helpers/http-app-harness.js';

useTestApp();

describe('the route table', () => {
  it('When another method reaches a declared path, then 405 with Allow (HEAD after GET) in the Error shape, counted under the template', async () => {
    const res = await observe('PUT', '/items');
    const slash = await observe('DELETE', '/items/');

    expect(res.answer).toMatchObject({
      status: 405,
      headers: { allow: 'GET, HEAD, POST', 'x-layer': undefined },
    });
    expect(JSON.parse(res.answer.body)).toEqual({
      error: 405,
      message: 'Method PUT is not allowed here; allowed: GET, HEAD, POST',
    });
    expect(res.metrics).toEqual(['method="PUT",route="/items",status="405" +1']);
    expect(slash.metrics).toEqual(['method="DELETE",route="/items",status="405" +1']);
    expect(res.logged).toEqual([
      { level: 'info', msg: 'request completed', method: 'PUT', res: { status: 405 } },
    ]);
  });

  it("When a route declares onError, then its handlers' errors, passing on included, reach it, while another method on its path gets the 405 in the Error shape", async () => {
    const answers = [];
    for (const [method, path] of [
      ['GET', '/page'],
      ['GET', '/page?fail=async'],
      ['GET', '/page?fail=sync'],
      ['GET', '/page?end=1'],
      ['PUT', '/page'],
    ] as const) {
      const { answer } = await observe(method, path);
      answers.push({
        path,
        status: answer.status,
        type: answer.headers['content-type'],
        body: answer.body,
      });
    }

    expect(answers).toEqual([
      { path: '/page', status: 200, type: 'text/html; charset=utf-8', body: '<p>page</p>' },
      {
        path: '/page?fail=async',
        status: 403,
        type: 'text/html; charset=utf-8',
        body: '<p>Not yours</p>',
      },
      {
        path: '/page?fail=sync',
        status: 500,
        type: 'text/html; charset=utf-8',
        body: '<p>sync failure</p>',
      },
      {
        path: '/page?end=1',
        status: 500,
        type: 'text/html; charset=utf-8',
        body: '<p>The handlers of GET passed the request on without answering</p>',
      },
      {
        path: '/page',
        status: 405,
        type: 'application/json; charset=utf-8',
        body: JSON.stringify({
          error: 405,
          message: 'Method PUT is not allowed here; allowed: GET, HEAD',
        }),
      },
    ]);
  });

  it('When the table is read, then it lists every route as data, and unknown paths are 404', async () => {
    const app = createHttpApp({ logger, routes: table });
    const other = await observe('GET', '/other');
    const unknown = await observe('GET', '/nowhere');

    expect(
      app.routes.map(({ method, path, hot }) => `${method} ${path}${hot ? ' (hot)' : ''}`),
    ).toEqual([
      'GET /items (hot)',
      'POST /items (hot)',
      'GET /things/:id/detail (hot)',
      'POST /relay/:id (hot)',
      'GET /other',
      'GET /page',
    ]);
    expect(other.answer).toMatchObject({ status: 200, headers: { 'x-layer': 'ran' } });
    expect([unknown.answer.status, JSON.parse(unknown.answer.body)]).toEqual([
      404,
      { error: 404, message: 'No route for GET /nowhere' },
    ]);
    expect(unknown.metrics).toEqual(['method="GET",route="unmatched",status="404" +1']);
  });
});
