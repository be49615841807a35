import { describe, expect, test } from '@jest/globals';
import {
  parseFeedPosition,
  parseRevocationChanges,
  parseRevocationEnvelope,
  parseRevocationMessage,
  revocationMessage,
  parseRevocationSnapshot,
  type LiveRevocationEntry,
  type RevocationEntry,
} from '../src/token-service-client/index.js';

const entry = (version: number, deleted = false, sub = 'sa-1'): RevocationEntry => ({
  tenant: 'acme',
  sub,
  version,
  deleted,
});
const live = (version: number, ttl = 360): LiveRevocationEntry => ({ ...entry(version), ttl });

describe('revocation wire format', () => {
  test('When an event is well formed, then it parses to exactly its four fields', () => {
    expect(
      parseRevocationMessage(
        '{"tenant":"acme","sub":"sa-1","version":2,"deleted":false,"extra":1}',
      ),
    ).toEqual(entry(2));
  });

  test.each([
    ['not JSON', 'nope'],
    ['a string version', '{"tenant":"acme","sub":"sa-1","version":"2","deleted":false}'],
    ['a zero version', '{"tenant":"acme","sub":"sa-1","version":0,"deleted":false}'],
    ['a fractional version', '{"tenant":"acme","sub":"sa-1","version":2.5,"deleted":false}'],
    ['no deleted flag', '{"tenant":"acme","sub":"sa-1","version":2}'],
    ['an empty sub', '{"tenant":"acme","sub":"","version":2,"deleted":false}'],
    ['an array', '[1,2]'],
    ['null', 'null'],
  ])('When an event has %s, then it is rejected', (_what, message) => {
    expect(parseRevocationMessage(message)).toBeUndefined();
  });

  test('When an event carries trace context and its publication time, then they come back beside the entry', () => {
    const traceparent = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    const message = revocationMessage(entry(3), {
      traceparent,
      tracestate: 'vendor=1',
      publishedMs: 1_700_000_000_000,
    });
    expect(parseRevocationEnvelope(message)).toEqual({
      entry: entry(3),
      traceparent,
      tracestate: 'vendor=1',
      publishedMs: 1_700_000_000_000,
    });
    expect(parseRevocationMessage(message)).toEqual(entry(3));
  });

  test.each([
    ['an upper-case traceparent', { traceparent: `00-${'A'.repeat(32)}-${'b'.repeat(16)}-01` }],
    ['a traceparent with a suffix', { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01-x` }],
    ['a tracestate without a traceparent', { tracestate: 'vendor=1' }],
    ['a string publication time', { published_ms: '1700000000000' }],
    ['a negative publication time', { published_ms: -5 }],
  ])(
    'When an event carries %s, then the extra is dropped and the entry still applies',
    (_what, extra) => {
      expect(parseRevocationEnvelope(JSON.stringify({ ...entry(4), ...extra }))).toEqual({
        entry: entry(4),
      });
    },
  );

  test('When one snapshot entry is malformed, then the whole snapshot is rejected (never half-applied)', () => {
    expect(
      parseRevocationSnapshot({
        position: '7',
        entries: [live(2), { tenant: 'acme', sub: 'sa-2', version: -1, deleted: false, ttl: 60 }],
      }),
    ).toBeUndefined();
    expect(
      parseRevocationSnapshot({ position: '7', entries: [live(2), entry(3)] }),
    ).toBeUndefined();
    expect(parseRevocationSnapshot({ position: '7', entries: 'x' })).toBeUndefined();
    expect(parseRevocationSnapshot({ entries: [live(2)] })).toBeUndefined();
    expect(parseRevocationSnapshot({ position: '7', entries: [{ ...live(2), extra: 1 }] })).toEqual(
      { position: '7', entries: [live(2)] },
    );
  });

  test.each([
    ['a ttl of 0', { ...live(2), ttl: 0 }],
    ['a fractional ttl', { ...live(2), ttl: 1.5 }],
    ['a ttl as a string', { ...live(2), ttl: '60' }],
    ['a ttl above a week', { ...live(2), ttl: 7 * 86_400 + 1 }],
  ])('When a feed entry has %s, then the page is rejected', (_what, bad) => {
    expect(
      parseRevocationChanges({ reset: false, position: '9', more: false, entries: [bad] }),
    ).toBeUndefined();
  });

  test('When a change-feed page is well formed, then it parses; a reset needs nothing else; anything in between is rejected', () => {
    expect(
      parseRevocationChanges({ reset: false, position: '9', more: true, entries: [live(2)] }),
    ).toEqual({ reset: false, position: '9', more: true, entries: [live(2)] });
    expect(parseRevocationChanges({ reset: true, position: 'ignored' })).toEqual({ reset: true });
    expect(parseRevocationChanges({ position: '9', more: false, entries: [] })).toBeUndefined();
    expect(parseRevocationChanges({ reset: false, position: '9', entries: [] })).toBeUndefined();
    expect(
      parseRevocationChanges({ reset: 'no', position: '9', more: false, entries: [] }),
    ).toBeUndefined();
  });

  test.each([
    ['0', '0'],
    ['9223372036854775807', '9223372036854775807'],
    ['9223372036854775808', undefined],
    ['-1', undefined],
    ['01', undefined],
    ['1e3', undefined],
    ['', undefined],
    [7, undefined],
  ])('When a feed position is %p, then it parses to %p', (value, parsed) => {
    expect(parseFeedPosition(value)).toBe(parsed);
  });
});
