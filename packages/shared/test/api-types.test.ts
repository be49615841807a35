import { describe, expect, it } from '@jest/globals';
import { NewPlantSchema, parseInt64 } from '../src/api/index.js';
import { parseJsonLossless } from '../src/http/index.js';

describe('NewPlant', () => {
  const parse = (text: string) => NewPlantSchema.safeParse(parseJsonLossless(text));

  it('When the id is int64 max or min, then it is kept exactly', () => {
    expect(parse('{"id":9223372036854775807,"name":"a"}')).toMatchObject({
      success: true,
      data: { id: '9223372036854775807' },
    });
    expect(parse('{"id":-9223372036854775808,"name":"a"}')).toMatchObject({
      success: true,
      data: { id: '-9223372036854775808' },
    });
  });

  it.each([
    '9223372036854775808',
    '-9223372036854775809',
    '1.5',
    '"12"',
    'null',
    '1e3',
    'true',
    '[]',
  ])('When the id is %s, then it is refused', (id) => {
    expect(parse(`{"id":${id},"name":"a"}`).success).toBe(false);
  });

  it.each([
    ['empty name', '{"id":1,"name":""}'],
    ['blank name', '{"id":1,"name":"   "}'],
    ['control character', '{"id":1,"name":"a\\u0007b"}'],
    ['lone surrogate', '{"id":1,"name":"a\\ud800"}'],
    ['long name', `{"id":1,"name":"${'x'.repeat(256)}"}`],
    ['long tag', `{"id":1,"name":"a","tag":"${'x'.repeat(65)}"}`],
    ['missing name', '{"id":1}'],
    ['missing id', '{"name":"a"}'],
    ['numeric name', '{"id":1,"name":5}'],
  ])('When the body has a %s, then it is refused', (_case, text) => {
    expect(parse(text).success).toBe(false);
  });

  it('When name is at its bound in emoji code points, then it is accepted', () => {
    expect(parse(`{"id":1,"name":"${'🌵'.repeat(255)}"}`).success).toBe(true);
  });
});

describe('parseInt64', () => {
  it('When given a plain safe integer number, then it returns its decimal string', () => {
    expect(parseInt64(42)).toBe('42');
    expect(parseInt64(4.2)).toBeUndefined();
    expect(parseInt64('42')).toBeUndefined();
  });
});

describe('parseJsonLossless', () => {
  it('When keys repeat, then parsing fails', () => {
    expect(() => parseJsonLossless('{"a":1,"a":2}')).toThrow();
  });
  it('When a key is __proto__, then no prototype changes', () => {
    const value = parseJsonLossless('{"__proto__":{"polluted":1}}') as object;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as { polluted?: number }).polluted).toBeUndefined();
  });
});
