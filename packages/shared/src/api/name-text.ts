/**
 * Names a person can trust: the text rule of service-account names, plant names and tags, and
 * the key that makes two names that look alike one name.
 *
 * A name is read by a person on a list or an audit trail and acted on ("disable deploy-bot"),
 * so what is shown must be what is stored and two different accounts must not look the same.
 * `nameText` (api-types.ts) refuses the characters that change what is shown without being
 * seen: format characters (Cf: bidi overrides and isolates such as U+202E, zero-width space and
 * joiners, the BOM, soft hyphen), private-use (Co) and unassigned (Cn) code points (no font
 * agrees on them), line and paragraph separators (Zl, Zp), besides `boundedText`'s control
 * characters (Cc) and lone surrogates (Cs). `nameKey` folds what still looks alike (case,
 * compatibility forms, Unicode TR39 confusables), so a unique index on it refuses `Аdmin`
 * (Cyrillic А) beside `Admin`.
 */
import unhomoglyph from 'unhomoglyph';

/** Unassigned is judged by the running Node's Unicode version: a newer character waits for a Node that knows it. */
const INVISIBLE_OR_UNKNOWN = /[\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;

/** The rule in one sentence, for documents and form hints. */
export const NAME_RULE = 'No control, bidi, zero-width, private-use or unassigned characters';

/** True when `text` holds a format, private-use, unassigned or line/paragraph separator character (`nameText` refuses it). */
export function hasInvisibleCharacters(text: string): boolean {
  return INVISIBLE_OR_UNKNOWN.test(text);
}

/**
 * Case folding: upper then lower case folds the pairs `toLowerCase` alone keeps apart (ß and
 * SS, ΐ and its capitals), and final sigma is σ wherever it stands. The confusable skeleton
 * below merges most of what full case folding would add.
 */
function caseFold(text: string): string {
  return text.toUpperCase().toLowerCase().replaceAll('ς', 'σ');
}

/**
 * The key two names share when a person could take one for the other: the TR39 skeleton
 * (NFD, each character mapped through confusables.txt, NFD again) of the NFKC form of the
 * case-folded name, case-folded once more because the confusables map is case-sensitive
 * (`ᗅ` maps to `A`, not `a`). `Admin`, `ADMIN`, `Аdmin` (Cyrillic), `Ａｄｍｉｎ` (fullwidth) and
 * `adrnin` share a key.
 *
 * unhomoglyph rather than `confusables`: it is the Unicode Consortium's own mapping
 * (confusables.txt) generated into data by its maintainers (nodeca, of markdown-it), while
 * `confusables` is a hand-curated English look-alike list. Its data is of Unicode 13:
 * characters added since then map to themselves until it is updated.
 */
export function nameKey(name: string): string {
  const folded = caseFold(name).normalize('NFKC');
  return caseFold(unhomoglyph(folded.normalize('NFD')).normalize('NFD'));
}
