/**
 * The change-effects table as markdown, for docs/change-effects.md: the section between the
 * markers is this rendering, and test/change-effects.test.ts fails when the file and the table
 * differ (run it with UPDATE_CHANGE_EFFECTS=1 to write the section).
 */
import { REVOCATION_CHANNEL } from '@plant/shared/token-service-client';
import { KEY_ROTATION_CHANNEL } from '../realms/index.js';
import { EVENT_TYPES, type AccountSignal } from '../signal-outbox/index.js';
import {
  CHANGE_EFFECTS,
  CHANGE_KINDS,
  type ChangeEffects,
  type Publication,
  type Revocation,
} from './change-effects.js';

export const BEGIN_MARKER = '<!-- change-effects:begin (generated from change-effects.ts) -->';
export const END_MARKER = '<!-- change-effects:end -->';

const REVOCATIONS: Record<Revocation, string> = {
  none: 'nothing',
  'older-tokens': 'tokens issued before (version bumped; feed row)',
  deleted: 'every token, for good (version bumped, principal deleted; feed row)',
  'older-tokens-of-each': 'tokens issued before, of each reached (version bumped; feed row each)',
  'credential-tokens':
    "exactly the removed credential's tokens (`cred` claim; version kept; feed row naming it)",
};

const PUBLICATIONS: Record<Publication, string> = {
  'revocation-entry': `entry on \`${REVOCATION_CHANNEL}\``,
  'revocation-entry-of-each': `entry of each on \`${REVOCATION_CHANNEL}\``,
  'key-change': `realm on \`${KEY_ROTATION_CHANNEL}\``,
  none: 'nothing',
};

const SHORT_TYPES: Record<AccountSignal['type'], string> = {
  'credential-change': `CAEP ${EVENT_TYPES.credentialChange.split('/').pop()}`,
  'session-revoked': `CAEP ${EVENT_TYPES.sessionRevoked.split('/').pop()}`,
  'account-disabled': `RISC ${EVENT_TYPES.accountDisabled.split('/').pop()}`,
  'account-enabled': `RISC ${EVENT_TYPES.accountEnabled.split('/').pop()}`,
  'account-purged': `RISC ${EVENT_TYPES.accountPurged.split('/').pop()}`,
  'credential-compromise': `RISC ${EVENT_TYPES.credentialCompromise.split('/').pop()}`,
};

function signalText(signal: AccountSignal): string {
  const type = SHORT_TYPES[signal.type];
  if (signal.type === 'credential-change')
    return `${type} (${signal.credential}, ${signal.change})`;
  if (signal.type === 'credential-compromise') return `${type} (${signal.credential})`;
  return type;
}

function cellsOf(kind: string, effects: ChangeEffects): string[] {
  const revokes = REVOCATIONS[effects.revokes];
  const also = [
    effects.countsCredentialChange && 'credential revision counted',
    effects.endsRealmSessions && 'realm sessions ended',
    effects.reaches !== undefined && `reaches ${effects.reaches}`,
  ].filter((part): part is string => part !== false);
  const signals =
    effects.signals.length === 0
      ? 'none'
      : `${effects.signals.map(signalText).join(', ')}${effects.initiatedBy === 'system' ? ' (by the system)' : ''}`;
  const cells = [
    `\`${kind}\``,
    effects.what,
    also.length === 0 ? revokes : `${revokes}; ${also.join('; ')}`,
    PUBLICATIONS[effects.publishes],
    signals,
    effects.audit === null ? 'none' : `\`${effects.audit}\``,
  ];
  return cells.map((cell) => cell.replaceAll('|', '\\|'));
}

/** The rows as a markdown table with padded columns, as the formatter (biome) writes it. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(3, ...rows.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header!), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)];
}

/** The section between the markers, markers included. */
export function renderChangeEffects(): string {
  return [
    BEGIN_MARKER,
    '',
    ...table([
      [
        'Kind',
        'Change',
        'Revokes',
        'Publishes after commit',
        'Shared Signals events',
        'Audit (`user_security_events`)',
      ],
      ...CHANGE_KINDS.map((kind) => cellsOf(kind, CHANGE_EFFECTS[kind])),
    ]),
    '',
    END_MARKER,
  ].join('\n');
}

/** The generated section of a document, markers included; undefined when a marker is missing. */
export function generatedSection(document: string): string | undefined {
  const begin = document.indexOf(BEGIN_MARKER);
  const end = document.indexOf(END_MARKER);
  if (begin === -1 || end === -1 || end < begin) return undefined;
  return document.slice(begin, end + END_MARKER.length);
}
