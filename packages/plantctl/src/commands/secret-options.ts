/** The options of every command that makes a secret: where it goes (output/secret-sink.ts). */
import { type Command, Option } from 'commander';
import { discoverRealm } from '../auth/discovery.js';
import { SecretSink, type SecretFormat } from '../output/secret-sink.js';
import type { CommandContext } from './context.js';

export function withSecretOptions(command: Command): Command {
  return command
    .option(
      '--secret-file <path>',
      'write the new secret to this file (mode 0600; never overwrites one)',
    )
    .addOption(
      new Option(
        '--secret-format <format>',
        'how the secret is written: text, json, or k8s (a Kubernetes Secret manifest)',
      )
        .choices(['text', 'json', 'k8s'])
        .default('text'),
    );
}

export interface SecretOptions {
  secretFile?: string;
  secretFormat: SecretFormat;
}

export async function secretSink(ctx: CommandContext, options: SecretOptions): Promise<SecretSink> {
  const api = await ctx.api();
  const realm = await discoverRealm(api.session.profile.issuer);
  const sink = new SecretSink(ctx.io, {
    secretFormat: options.secretFormat,
    tokenUrl: realm.token_endpoint,
    ...(options.secretFile === undefined ? {} : { secretFile: options.secretFile }),
  });
  await sink.assertWritable();
  return sink;
}
