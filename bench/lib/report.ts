/**
 * Results as Markdown: one table format for the terminal and for bench/RESULTS.md, where each benchmark
 * owns one section between markers and rewrites only that section, so benchmarks run separately (and by
 * different people) never overwrite each other's figures.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const resultsFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../RESULTS.md');

const header = `# Benchmark results

Figures recorded by the benchmarks in this folder (\`npm run bench:<name>\`). Each section is rewritten by its
own benchmark and names the machine, the date and the exact command; rerun that command to refresh it.
`;

/** A Markdown table with columns padded to line up in a terminal; numbers are right-aligned. */
export function formatTable(columns: string[], rows: (string | number)[][]): string {
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? cell.toLocaleString('en-US') : cell)));
  const numeric = columns.map((_, i) => rows.length > 0 && rows.every((row) => typeof row[i] === 'number'));
  const widths = columns.map((column, i) => Math.max(column.length, 3, ...cells.map((row) => row[i].length)));
  const pad = (text: string, i: number) => (numeric[i] ? text.padStart(widths[i]) : text.padEnd(widths[i]));
  const line = (row: string[]) => `| ${row.map(pad).join(' | ')} |`;
  const rule = `|${widths.map((width, i) => (numeric[i] ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
  return [line(columns), rule, ...cells.map(line)].join('\n');
}

/** Replaces (or appends) the section `name` of bench/RESULTS.md, creating the file with its header. */
export async function writeResultsSection(name: string, markdown: string): Promise<void> {
  const begin = `<!-- results:${name} -->`;
  const end = `<!-- /results:${name} -->`;
  const block = `${begin}\n${markdown.trim()}\n${end}`;
  const current = existsSync(resultsFile) ? await readFile(resultsFile, 'utf8') : header;
  const start = current.indexOf(begin);
  const stop = current.indexOf(end);
  const next =
    start >= 0 && stop > start
      ? current.slice(0, start) + block + current.slice(stop + end.length)
      : `${current.trimEnd()}\n\n${block}\n`;
  await writeFile(resultsFile, next);
}
