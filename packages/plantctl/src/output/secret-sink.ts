/**
 * Where a new secret goes: printed once on stdout (the default), written to `--secret-file`
 * (mode 0600, never overwriting a file already there), or as a Kubernetes Secret manifest
 * (`--secret-format k8s`) on stdout or in that file. A secret goes nowhere else: not into the
 * tenant file, a log line or an error.
 */
import { stringify } from 'yaml';
import type { ServiceAccountWithSecret } from '../api/resources.js';
import { writePrivateFile } from '../config-dir.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { Io } from './output.js';
import { readFile } from 'node:fs/promises';

export type SecretFormat = 'text' | 'json' | 'k8s';

export interface SecretSinkOptions {
  secretFile?: string;
  secretFormat: SecretFormat;
  /** The realm's token endpoint, so a consumer of the Secret knows where to use it. */
  tokenUrl: string;
}

/** A DNS-1123 name for the Secret, from the account's name. */
export function kubernetesName(name: string): string {
  const base = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63 - 'plantctl-'.length)
    .replace(/-+$/, '');
  return `plantctl-${base || 'service-account'}`;
}

export function kubernetesSecret(account: ServiceAccountWithSecret, tokenUrl: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: kubernetesName(account.name),
      labels: { 'app.kubernetes.io/managed-by': 'plantctl' },
      annotations: { 'plantstore.dev/service-account': account.name },
    },
    type: 'Opaque',
    stringData: {
      client_id: account.client_id,
      client_secret: account.secret,
      token_url: tokenUrl,
    },
  });
}

function render(account: ServiceAccountWithSecret, options: SecretSinkOptions): string {
  switch (options.secretFormat) {
    case 'k8s':
      return `---\n${kubernetesSecret(account, options.tokenUrl)}`;
    case 'json':
      return `${JSON.stringify({ name: account.name, client_id: account.client_id, client_secret: account.secret, token_url: options.tokenUrl })}\n`;
    case 'text':
      return `name: ${account.name}\nclient_id: ${account.client_id}\nclient_secret: ${account.secret}\n(shown once: it cannot be read again, only reset)\n`;
  }
}

export class SecretSink {
  private written = '';

  constructor(
    private readonly io: Io,
    private readonly options: SecretSinkOptions,
  ) {}

  /** Whether secrets take stdout (then the command's other lines go to stderr). */
  get usesStdout(): boolean {
    return this.options.secretFile === undefined && this.options.secretFormat !== 'text';
  }

  async assertWritable(): Promise<void> {
    const { secretFile } = this.options;
    if (secretFile === undefined) return;
    const exists = await readFile(secretFile).then(
      () => true,
      () => false,
    );
    if (exists)
      throw new CliError(
        `${secretFile} exists: plantctl never overwrites a secret file`,
        EXIT.usage,
      );
  }

  async put(account: ServiceAccountWithSecret): Promise<void> {
    const text = render(account, this.options);
    if (this.options.secretFile === undefined) {
      this.io.out(text);
      return;
    }
    // Several new accounts in one apply share the file; each write replaces it whole (0600).
    this.written += text;
    await writePrivateFile(this.options.secretFile, this.written);
    this.io.err(`The secret of ${account.name} is in ${this.options.secretFile} (mode 0600).\n`);
  }
}
