/**
 * What every command gets: where to print, the global options (`--tenant`, `--output`), and the
 * signed-in API client made on first use (so `login` and `--help` need no sign-in).
 */
import { ApiClient } from '../api/api-client.js';
import type { ProfileStore } from '../auth/profile-store.js';
import { Session } from '../auth/session.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { Io, OutputFormat } from '../output/output.js';

export interface GlobalOptions {
  tenant?: string;
  output: OutputFormat;
}

export class CommandContext {
  private client?: ApiClient;

  constructor(
    readonly io: Io,
    readonly store: ProfileStore,
    private readonly globals: () => GlobalOptions,
  ) {}

  get output(): OutputFormat {
    const { output } = this.globals();
    if (output !== 'table' && output !== 'json')
      throw new CliError(`--output must be table or json, not ${output}`, EXIT.usage);
    return output;
  }

  get tenant(): string | undefined {
    return this.globals().tenant;
  }

  tell = (line: string): void => this.io.err(`${line}\n`);

  async api(): Promise<ApiClient> {
    this.client ??= new ApiClient(await Session.open(this.store, this.tenant, this.tell));
    return this.client;
  }
}
