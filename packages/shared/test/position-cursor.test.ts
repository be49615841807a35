import { describe, expect, test } from '@jest/globals';
import { BadRequest, positionCursor } from '../src/api/index.js';

const cursor = positionCursor('v1:', 'cursor is invalid');
const positive = positionCursor('before:', 'cursor is invalid', { min: 1n });
const of = (text: string) => Buffer.from(text).toString('base64url');

describe('positionCursor', () => {
  test.each(['0', '-9223372036854775808', '9223372036854775807', '42'])(
    'When %s is encoded, then it decodes to the same key',
    (key) => {
      expect(cursor.decode(cursor.encode(key))).toBe(key);
    },
  );

  test.each([
    ['past int64', of('v1:9223372036854775808')],
    ['far past int64', of('v1:9999999999999999999')],
    ['below int64', of('v1:-9223372036854775809')],
    ['a leading zero', of('v1:01')],
    ['minus zero', of('v1:-0')],
    ['another prefix', of('before:5')],
    ['no number', of('v1:')],
    ['an exponent', of('v1:1e3')],
    ['padding', `${of('v1:5')}=`],
    ['not base64url', 'djE6NQ+/'],
    ['too long', 'A'.repeat(65)],
    ['empty', ''],
  ])('When a cursor has %s, then it is a 400', (_what, raw) => {
    expect(() => cursor.decode(raw)).toThrow(BadRequest);
  });

  test('When a key is below the minimum, then it is a 400; absent is undefined; a non-string is a 400', () => {
    expect(() => positive.decode(of('before:0'))).toThrow(BadRequest);
    expect(() => positive.decode(of('before:9999999999999999999'))).toThrow(BadRequest);
    expect(positive.decode(undefined)).toBeUndefined();
    expect(() => positive.decode(['a', 'b'])).toThrow(BadRequest);
  });
});
