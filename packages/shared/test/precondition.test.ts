/**
 * `If-Match` as the API reads it (RFC 9110 §13.1.1): `*`, a list of strong tags of ours; weak
 * or foreign tags match nothing; a malformed header is refused; the precondition is taken by a
 * request's first change only.
 */
import { describe, expect, test } from '@jest/globals';
import {
  conditionalCall,
  etagOf,
  IF_MATCH_MAX,
  ifMatchHeader,
  meets,
  parseIfMatch,
  takePrecondition,
} from '@plant/shared/http';

describe('parseIfMatch', () => {
  test('When the header is absent, *, ours, weak, foreign or a list, then it reads as RFC 9110 says', () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch('*')).toEqual({ any: true });
    expect(parseIfMatch(etagOf(7))).toEqual({ any: false, revisions: [7] });
    expect(parseIfMatch('W/"v7"')).toEqual({ any: false, revisions: [] });
    expect(parseIfMatch('"abc"')).toEqual({ any: false, revisions: [] });
    expect(parseIfMatch('"v3", W/"v4" , "v5"')).toEqual({ any: false, revisions: [3, 5] });
    expect(parseIfMatch(['"v1"', '"v2"'])).toEqual({ any: false, revisions: [1, 2] });
  });

  test('When the header is malformed or too long, then it is null (the route answers 400)', () => {
    for (const bad of [
      'v7',
      '"v7',
      '',
      'W/v7',
      '"v7" "v8"',
      '"a"b"',
      '*, "v1"',
      `"${'x'.repeat(IF_MATCH_MAX)}"`,
    ])
      expect({ bad, parsed: parseIfMatch(bad) }).toEqual({ bad, parsed: null });
  });

  test('When a precondition is met or not, then meets says so, and the header form reads back the same', () => {
    const list = parseIfMatch('"v3", "v5"')!;
    expect([meets(list, 3), meets(list, 4), meets({ any: true }, 9)]).toEqual([true, false, true]);
    expect(parseIfMatch(ifMatchHeader(list))).toEqual(list);
    expect(parseIfMatch(ifMatchHeader({ any: false, revisions: [] }))).toEqual({
      any: false,
      revisions: [],
    });
  });
});

describe('conditionalCall', () => {
  test('When a use case makes several changes, then only the first takes the precondition; outside a call there is none', async () => {
    const taken = await conditionalCall({ any: false, revisions: [2] }, async () => {
      await Promise.resolve();
      return [takePrecondition(), takePrecondition()];
    });

    expect(taken).toEqual([{ any: false, revisions: [2] }, undefined]);
    expect(takePrecondition()).toBeUndefined();
  });
});
