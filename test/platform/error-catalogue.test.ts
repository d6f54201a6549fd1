import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONTENT_ERROR_CODES } from '../../src/content/errors.js';
import { PLATFORM_ERROR_CODES } from '../../src/platform/errors.js';

/** The rows of the README's error table: `| \`code\` | status | when |`. */
async function readmeErrorTable(): Promise<Map<string, number>> {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = [...readme.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)];
  return new Map(rows.map(([, code, status]) => [code, Number(status)]));
}

describe.each([
  ['platform', PLATFORM_ERROR_CODES],
  ['content', CONTENT_ERROR_CODES],
])('the %s error catalogue', (_name, codes: Readonly<Record<string, number>>) => {
  it.each(Object.entries(codes))('documents %s with status %i in the README error table', async (code, status) => {
    expect((await readmeErrorTable()).get(code)).toBe(status);
  });
});
