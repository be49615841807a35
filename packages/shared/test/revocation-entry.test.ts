import { describe, expect, test } from '@jest/globals';
import { parseRevocationMessage, parseRevocationSnapshot, type RevocationEntry } from '../src/index.js';

const entry = (version: number, deleted = false, sub = 'sa-1'): RevocationEntry => ({ tenant: 'acme', sub, version, deleted });

describe('revocation wire format', () => {
  test('When an event is well formed, then it parses to exactly its four fields', () => {
    expect(parseRevocationMessage('{"tenant":"acme","sub":"sa-1","version":2,"deleted":false,"extra":1}')).toEqual(entry(2));
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

  test('When one snapshot entry is malformed, then the whole snapshot is rejected (never half-applied)', () => {
    expect(parseRevocationSnapshot({ entries: [entry(2), { tenant: 'acme', sub: 'sa-2', version: -1, deleted: false }] })).toBeUndefined();
    expect(parseRevocationSnapshot({ entries: 'x' })).toBeUndefined();
    expect(parseRevocationSnapshot({ entries: [entry(2)] })).toEqual([entry(2)]);
  });
});
