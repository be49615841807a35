/**
 * The repository's docs as a reader meets them: the performance figures are the committed
 * result's (rendered by bench/lib/performance-table.mjs, never typed by hand), bench/results
 * keeps one result per kind, and every relative link in the Markdown resolves.
 */
import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { repoRoot } from '../src/repo-paths.js';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

describe('docs/performance.md', () => {
  test('When the table is compared with what the newest committed full run renders, then they are the same (`node bench/lib/performance-table.mjs` rewrites it)', () => {
    const rendered = execFileSync(
      process.execPath,
      [join(repoRoot, 'bench/lib/performance-table.mjs'), '--print'],
      { encoding: 'utf8' },
    ).trim();
    const doc = read('docs/performance.md');
    const table = doc.match(
      /<!-- performance-table:start[^>]*-->\n([\s\S]*?)\n<!-- performance-table:end -->/,
    );
    expect(table?.[1]?.trim()).toBe(rendered);
  });

  test('When bench/results is listed in git, then it holds at most one result of each kind and no partial, quick or profiled run', () => {
    const files = execFileSync('git', ['ls-files', 'bench/results'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice('bench/results/'.length));
    // The kind is the name without its date: '' (a full run), 'soak', 'runtime-', 'tracing-' …
    const kinds = files.map((f) => f.replace(/\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z/, ''));
    expect(kinds.filter((k, i) => kinds.indexOf(k) !== i)).toEqual([]);
    expect(files.filter((f) => /-(partial|quick|profiled|perf|waits|log-)/.test(f))).toEqual([]);
  });
});

/** Markdown files a reader of the repository opens: the root's, docs/, each package's README. */
function markdownFiles(): string[] {
  const out = ['README.md', 'CONTRIBUTING.md', 'SECURITY.md'];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(repoRoot, dir))) {
      const path = `${dir}/${name}`;
      if (statSync(join(repoRoot, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) out.push(path);
    }
  };
  walk('docs');
  for (const group of ['services', 'packages', 'examples'])
    for (const name of readdirSync(join(repoRoot, group)))
      if (existsSync(join(repoRoot, group, name, 'README.md')))
        out.push(`${group}/${name}/README.md`);
  return out;
}

/** GitHub's anchors for a document's headings (lower case, punctuation dropped, spaces to '-'). */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The relative links of one Markdown file that lead nowhere: a missing file or heading. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  const text = read(file)
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '');
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // https:, mailto:
    const [path = '', anchor] = target!.split('#');
    const resolved = path === '' ? file : relative(repoRoot, join(repoRoot, dirname(file), path));
    if (!existsSync(join(repoRoot, resolved))) broken.push(`${file}: ${target} (no ${resolved})`);
    else if (anchor && resolved.endsWith('.md') && !anchorsOf(read(resolved)).has(anchor))
      broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
  }
  return broken;
}

describe('links in the Markdown', () => {
  test('When a relative link is followed, then its file exists and its #anchor is a heading there', () => {
    expect(markdownFiles().flatMap(brokenLinks)).toEqual([]);
  });
});
