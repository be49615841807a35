/**
 * The cycles rule of the wing rules (wing-rules.ts): a depth-first walk of the wing graph that
 * reports each cycle not broken by an allowed edge, and the allowed edges that no longer exist.
 */
import type { Violation } from './wing-rules.js';

/** A cycle of the wing graph not broken by an allowed edge, one per cycle found; and allowed edges that no longer exist. */
export function cycleViolations(
  edges: Map<string, Set<string>>,
  allowed: Record<string, string>,
): Violation[] {
  const violations: Violation[] = [];
  for (const edge of Object.keys(allowed)) {
    const [from, to] = edge.split(' -> ');
    if (!from || !to || !edges.get(from)?.has(to)) {
      violations.push({
        file: '-',
        specifier: edge,
        rule: 'exceptions',
        message: `the allowed cycle edge '${edge}' is no longer an import: remove it from the rules`,
      });
    }
  }
  const next = (w: string) => [...(edges.get(w) ?? [])].filter((t) => !(`${w} -> ${t}` in allowed));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (w: string): void => {
    state.set(w, 'open');
    path.push(w);
    for (const t of next(w).sort()) {
      if (state.get(t) === 'open') {
        const cycle = [...path.slice(path.indexOf(t)), t];
        violations.push({
          file: `${cycle[0]}/`,
          specifier: cycle.join(' -> '),
          rule: 'cycles',
          message: `the wings import each other in a cycle: ${cycle.join(' -> ')}; move the file that closes it, or allow the edge with its reason`,
        });
      } else if (!state.has(t)) visit(t);
    }
    path.pop();
    state.set(w, 'done');
  };
  for (const w of [...edges.keys()].sort()) if (!state.has(w)) visit(w);
  return violations;
}
