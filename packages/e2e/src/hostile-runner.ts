/**
 * Sends generated hostile cases in small concurrent batches over keep-alive connections, and
 * how many: the default mode and the long one (`HOSTILE_RUNS=20000`).
 */
import fc from 'fast-check';

/** Cases per endpoint: 2,000 by default, `HOSTILE_RUNS=20000` for the long mode. */
export const HOSTILE_RUNS = Number(process.env.HOSTILE_RUNS ?? 2000);
/**
 * The fast-check seed of this process's runs: `HOSTILE_SEED` replays one, otherwise a random
 * one. Always chosen here (not left to fast-check) so that a check made after a run, on the
 * end state, can name it too.
 */
export const HOSTILE_SEED =
  process.env.HOSTILE_SEED === undefined
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.HOSTILE_SEED);
/** Cases in flight at once. */
export const HOSTILE_CONCURRENCY = 8;
/** Per test of a hostile-input file: the long mode runs for up to an hour. */
export const HOSTILE_TIMEOUT_MS = HOSTILE_RUNS > 2000 ? 3_600_000 : 180_000;

/**
 * Runs `check` on `runs` generated cases, `HOSTILE_CONCURRENCY` at a time: each fast-check
 * run is one batch sent concurrently. `check` returns a problem description or undefined.
 * Shrinking is off (each step would be a round of HTTP requests): the failure message
 * carries the case itself and fast-check's seed reproduces the run.
 */
export async function assertHostile<T>(
  arbitrary: fc.Arbitrary<T>,
  check: (input: T) => Promise<string | undefined>,
  runs = HOSTILE_RUNS,
): Promise<number> {
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(arbitrary, { minLength: HOSTILE_CONCURRENCY, maxLength: HOSTILE_CONCURRENCY }),
      async (batch) => {
        const problems = await Promise.all(
          batch.map(async (input) => {
            const problem = await check(input).catch(
              (err: unknown) => `request failed: ${(err as Error).message}`,
            );
            return problem === undefined
              ? undefined
              : `${problem}\n  input: ${describeInput(input)}`;
          }),
        );
        sent += batch.length;
        const first = problems.find((p) => p !== undefined);
        if (first !== undefined) throw new Error(first);
      },
    ),
    { numRuns: Math.ceil(runs / HOSTILE_CONCURRENCY), endOnFailure: true, seed: HOSTILE_SEED },
  );
  return sent;
}

/**
 * Runs `check` on every case of a fixed list (a dictionary sweep), `HOSTILE_CONCURRENCY` at a
 * time, and fails with the first problem and its case; resolves with the number of cases sent.
 */
export async function assertEach<T>(
  cases: readonly T[],
  check: (input: T) => Promise<string | undefined>,
): Promise<number> {
  let next = 0;
  const problems: string[] = [];
  const worker = async () => {
    while (next < cases.length && problems.length === 0) {
      const input = cases[next++]!;
      const problem = await check(input).catch(
        (err: unknown) => `request failed: ${(err as Error).message}`,
      );
      if (problem !== undefined) problems.push(`${problem}\n  input: ${describeInput(input)}`);
    }
  };
  await Promise.all(Array.from({ length: HOSTILE_CONCURRENCY }, worker));
  if (problems.length > 0) throw new Error(problems[0]);
  return next;
}

function describeInput(input: unknown): string {
  const text = JSON.stringify(input, (_k, v: unknown) => {
    if (
      v instanceof Buffer ||
      (v !== null && typeof v === 'object' && (v as { type?: unknown }).type === 'Buffer')
    ) {
      const buf = v instanceof Buffer ? v : Buffer.from((v as { data: number[] }).data);
      return `<${buf.length} bytes: ${JSON.stringify(buf.subarray(0, 200).toString('latin1'))}>`;
    }
    return v;
  });
  return text.length > 1200 ? `${text.slice(0, 1200)}…` : text;
}
