/**
 * What commands print: a table for people (columns padded, one row per item), or with
 * `--output json` the API's JSON exactly, for scripts. Everything for the person that is not the
 * answer (progress, the device code) goes to stderr, so stdout can be piped.
 */
export type OutputFormat = 'table' | 'json';

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

export type Column<T> = [header: string, value: (row: T) => unknown];

export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map(([, value]) => cellText(value(row))));
  const headers = columns.map(([header]) => header);
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...cells.map(line)].join('\n')}\n`;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.join(',');
  // Control characters in names a tenant chose never reach the terminal as controls.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  return String(value).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

export function printResult<T>(
  io: Io,
  format: OutputFormat,
  value: T,
  columns: Column<T extends Array<infer R> ? R : T>[],
): void {
  if (format === 'json') {
    io.out(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const rows = (Array.isArray(value) ? value : [value]) as Array<T extends Array<infer R> ? R : T>;
  io.out(table(rows, columns));
}
