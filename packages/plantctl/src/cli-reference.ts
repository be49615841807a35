/**
 * The CLI reference (docs/cli-reference.md), rendered from the program's own `--help` of every
 * command, so it cannot drift from what `plantctl <command> --help` prints: the suite compares
 * the file with this rendering, and `pnpm --filter @plant/plantctl docs:cli` rewrites it.
 */
import type { Command } from 'commander';
import { buildProgram } from './program.js';

function walk(command: Command, path: string[] = []): Array<{ path: string[]; command: Command }> {
  const here = { path, command };
  return [
    here,
    ...command.commands
      .filter((c) => c.name() !== 'help')
      .flatMap((c) => walk(c, [...path, c.name()])),
  ];
}

export function renderCliReference(): string {
  let help = '';
  // A config directory that is never read: help needs no sign-in.
  const program = buildProgram(
    { out: (text) => (help += text), err: () => {} },
    { PLANTCTL_CONFIG_DIR: '/nonexistent' },
  );
  const sections = walk(program).map(({ path, command }) => {
    help = '';
    // outputHelp, not helpInformation: it includes the text added after (exit codes, notes).
    command.outputHelp();
    const title = ['plantctl', ...path].join(' ');
    return `## ${title}\n\n\`\`\`text\n${help.trimEnd()}\n\`\`\`\n`;
  });
  return [
    '# plantctl command reference',
    '',
    '<!-- Generated from plantctl --help by `pnpm --filter @plant/plantctl docs:cli`; do not edit. -->',
    '',
    sections.join('\n'),
  ].join('\n');
}
