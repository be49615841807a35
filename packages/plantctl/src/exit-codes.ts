/**
 * The exit codes scripts can rely on (the CLI reference lists them). `plan` keeps to the three
 * Terraform's `-detailed-exitcode` made familiar: 0 no change, 2 changes, 1 any error.
 */
export const EXIT = {
  /** Done; for `plan`, nothing would change. */
  ok: 0,
  /** Any other failure: the API refused, the network failed, a file could not be read. */
  error: 1,
  /** `plan` only: the tenant differs from the file; `apply` would change it. */
  changes: 2,
  /** Not signed in, or the sign-in ended (run `plantctl login`). */
  signInNeeded: 3,
  /** What was named does not exist in the tenant (404). */
  notFound: 4,
  /** A conflict: the name is taken, a limit is reached (409), or the tenant changed since the plan (412). */
  conflict: 5,
  /** Bad arguments or options. */
  usage: 64,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI reports as one line on stderr and an exit code, never a stack. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.error,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
