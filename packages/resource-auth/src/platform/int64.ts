/** The range of a Postgres bigint: ids, versions and feed positions that travel as decimal strings. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
