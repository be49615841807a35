/** The name rule and the look-alike key (name-text.ts): pure functions, checked on their own. */
import { describe, expect, it } from '@jest/globals';
import { hasInvisibleCharacters, nameKey, nameText } from '../src/api/index.js';

describe('nameKey', () => {
  it.each([
    ['another letter case', 'ADMIN'],
    ['a Cyrillic А', '\u0410dmin'],
    ['a Cyrillic а and і', '\u0430dm\u0456n'],
    ['fullwidth letters (NFKC)', '\uff21\uff44\uff4d\uff49\uff4e'],
    ['a Greek Α and a Roman numeral Ⅰ', '\u0391dm\u2160n'],
    ['rn for m', 'adrnin'],
  ])('When a name differs from "Admin" by %s, then the two share a key', (_case, name) => {
    expect(nameKey(name)).toBe(nameKey('Admin'));
  });

  it('When a precomposed and a decomposed accent spell one name, then they share a key', () => {
    expect(nameKey('Ádmin')).toBe(nameKey('A\u0301dmin'));
  });

  it.each([
    ['straße', 'STRASSE'],
    ['ΟΔΟΣ', 'οδος'],
    ['ﬁle', 'file'],
  ])(
    'When %s and %s differ only by case folding or a compatibility form, then they share a key',
    (a, b) => {
      expect(nameKey(a)).toBe(nameKey(b));
    },
  );

  it.each([
    ['admin', 'admins'],
    ['deploy-bot', 'deploy-box'],
    ['nightly-import', 'nightly-export'],
    ['Admin', 'Ádmin'],
  ])('When %s and %s look different, then their keys differ', (a, b) => {
    expect(nameKey(a)).not.toBe(nameKey(b));
  });
});

describe('nameText', () => {
  const name = nameText('name', 64);
  const refused =
    'name must not contain invisible or formatting characters (bidi controls, zero-width and the like)';

  it.each([
    ['a right-to-left override', 'deploy\u202Edlo-'],
    ['a right-to-left isolate', 'a\u2067b\u2069'],
    ['a zero-width space', 'ad\u200Bmin'],
    ['a zero-width joiner', 'a\u200Db'],
    ['a word joiner', 'a\u2060b'],
    ['a byte order mark', '\ufeffadmin'],
    ['a soft hyphen', 'ad\u00admin'],
    ['a tag character (astral Cf)', 'a\u{E0041}'],
    ['a private-use character', 'a\ue000'],
    ['a line separator', 'a\u2028b'],
    ['a paragraph separator', 'a\u2029b'],
    ['an unassigned code point', 'a\u0378'],
  ])('When a name holds %s, then it is refused with the rule', (_case, text) => {
    expect(hasInvisibleCharacters(text)).toBe(true);
    expect(name.safeParse(text).error?.issues.map((i) => i.message)).toEqual([refused]);
  });

  it.each(['Admin', 'Nightly Import', 'ø-æ-å', '🌵 cactus', 'Аdmin', 'a\u00a0b', 'Café'])(
    "When a name is %j, then the character rule accepts it (look-alikes are the key's concern)",
    (text) => {
      expect(name.safeParse(text).success).toBe(true);
    },
  );
});
