import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { useHarness, type Harness } from './helpers/harness.js';
import { feed } from './helpers/revocation-feed.js';

/**
 * The change feed against a hostile or broken caller: whatever position or page size it sends,
 * the answer is a 400 in the Error shape, a reset, or one bounded page; never a 500, never an
 * unbounded body, and nothing without a credential.
 */
let harness: Harness;
useHarness((started) => (harness = started));
const MESSAGE = 'after must be a feed position: a decimal integer from 0 to 9223372036854775807';

describe('hostile positions on the change feed', () => {
  test.each([
    ['no position', ''],
    ['an empty position', '?after='],
    ['a negative position', '?after=-1'],
    ['a leading zero', '?after=01'],
    ['an exponent', '?after=1e3'],
    ['a fraction', '?after=1.0'],
    ['a space', '?after=%201'],
    ['a NUL', '?after=1%00'],
    ['one past the int64 maximum', '?after=9223372036854775808'],
    ['a huge number', `?after=${'9'.repeat(400)}`],
    ['a repeated parameter', '?after=1&after=2'],
    ['an array form', '?after[]=1'],
    ['an object form', '?after[a]=1'],
  ])('When the position is %s, then 400 in the Error shape', async (_what, query) => {
    const res = await feed(harness).changesRaw(query);

    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { error: 400, message: MESSAGE },
    });
  });

  test.each([
    ['zero', '0'],
    ['above the maximum page', '1001'],
    ['negative', '-5'],
    ['not a number', 'all'],
    ['a fraction', '2.5'],
    ['huge', '9'.repeat(40)],
  ])('When the page size is %s, then 400 in the Error shape', async (_what, limit) => {
    const res = await feed(harness).changesRaw(`?after=0&limit=${limit}`);

    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { error: 400, message: 'limit must be an integer between 1 and 1000' },
    });
  });

  // Fifty queue on a pool of ten whose wait is bounded (knex's acquire timeout): on a loaded host
  // the last of them may be shed with the database-unavailable answer, which resource servers
  // retry; what must never happen is a 500 or an unbounded page.
  test('When 50 requests for the largest pages arrive at once, then each is a page of at most 1000 entries, a reset, or a 503 with Retry-After; never a 500', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => feed(harness).changesRaw('?after=0&limit=1000')),
    );

    expect(answers.some((res) => res.status === 200)).toBe(true);
    for (const res of answers) {
      if (res.status === 503) {
        expect(res.body).toEqual({ error: 503, message: 'Service temporarily unavailable' });
        expect(res.headers['retry-after']).toBe('1');
        continue;
      }
      expect(res.status).toBe(200);
      if (res.body.reset === true) expect(res.body).toEqual({ reset: true });
      else expect(res.body.entries.length).toBeLessThanOrEqual(1000);
    }
  });

  test('When the feed is called without a credential or with a wrong one, then 401 whatever the position', async () => {
    const url = harness.internalUrl;
    const none = await request(url).get('/internal/v1/revocations/changes?after=0');
    const wrong = await request(url)
      .get('/internal/v1/revocations/changes?after=0')
      .set('authorization', 'Bearer not-a-credential-0123456789');

    expect([none.status, wrong.status]).toEqual([401, 401]);
    expect(none.body).toEqual({ error: 401, message: 'A valid internal API token is required' });
  });
});
