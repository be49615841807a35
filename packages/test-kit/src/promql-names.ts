/**
 * The metric names a PromQL expression reads, for the checks that a dashboard or a rule names
 * only metrics the services export (or rules record). A reader of our own expressions, not a
 * PromQL parser: it drops strings, label matchers, `by (…)`/`without (…)` lists, ranges and
 * numbers, then every identifier not followed by `(` and not an operator keyword is a name.
 */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

export function metricNamesOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b\d+(\.\d+)?(e[+-]?\d+)?\b/gi, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?/g)) {
    const [token, call] = [match[0].replace(/\s*\($/, ''), match[1]];
    if (call !== undefined || KEYWORDS.has(token.toLowerCase())) continue;
    names.add(token);
  }
  return [...names].sort();
}

/** The sample names of a Prometheus text exposition (`_bucket`, `_sum`, `_count` included). */
export function sampleNamesOf(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const name = /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(line)?.[0];
    if (name !== undefined) names.add(name);
  }
  return names;
}
