/**
 * How long a revocation entry is needed (DESIGN.md, "Tokens and revocation"). A token minted
 * before a change carries a lower `ver` and expires at most `ACCESS_TOKEN_TTL` after it was
 * minted, so once the change is older than the lifetime plus this margin, no token it revokes
 * can still be accepted anywhere: the map, the snapshot and the store let it go.
 *
 * The margin covers, together: a grant in flight when the change commits (it read the old
 * version and signs just after), the token service's clock running ahead of true time (its
 * `iat`/`exp`), a resource server's clock running behind (it accepts until its own clock passes
 * `exp`), and the 5 s leeway resource servers allow on `exp`. Postgres's clock does not count:
 * a change's age and its `ttl` are both measured by it, and resource servers count a `ttl` from
 * when the answer arrived. docs/hardening.md, "Clock skew", states the budget.
 */
export const REVOCATION_SKEW_MARGIN_SECONDS = 60;

/** The seconds a change stays in the feed, the snapshot and the maps: the longest token lifetime plus the margin. */
export function revocationHorizonSeconds(accessTokenTtl: number): number {
  return accessTokenTtl + REVOCATION_SKEW_MARGIN_SECONDS;
}
