import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import * as authErrors from '../../src/auth/errors.js';
import { CONTENT_ERROR_CODES } from '../../src/content/errors.js';
import { OPERATION_FAILURES, ORG_ERROR_CODES } from '../../src/org/errors.js';
import { PLATFORM_ERROR_CODES } from '../../src/platform/errors.js';

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');

/**
 * The rows of the first table after `marker` in the README: `| \`code\` | status | when |` gives code → status,
 * `| \`code\` | meaning |` code → null.
 */
function readmeTable(marker: string): Map<string, number | null> {
  const at = readme.indexOf(marker);
  if (at < 0) throw new Error(`the README has no "${marker}"`);
  const lines = readme.slice(at).split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const rows = lines.slice(start + 2, lines.findIndex((line, index) => index > start && !line.startsWith('|')));
  return new Map(
    rows.map((row) => {
      const [, code, second] = row.split('|').map((cell) => cell.trim());
      return [code.replace(/^`|`$/g, ''), /^\d{3}$/.test(second) ? Number(second) : null];
    }),
  );
}

/** auth/errors.ts is a catalogue of classes, one per protocol error: each one's code and status. */
function authErrorCodes(): Record<string, number> {
  type ErrorClass = new (description: string, retryAfter: number) => authErrors.OAuthError;
  const classes = Object.values(authErrors as Record<string, unknown>).filter(
    (value): value is ErrorClass => typeof value === 'function' && value.prototype instanceof authErrors.OAuthError,
  );
  return Object.fromEntries(classes.map((ErrorClass) => new ErrorClass('', 0)).map((error) => [error.code, error.status]));
}

describe.each([
  ['platform and content', 'the catalogues `src/platform/errors.ts` and `src/content/errors.ts`', { ...PLATFORM_ERROR_CODES, ...CONTENT_ERROR_CODES }],
  ['org', '**Org errors.**', ORG_ERROR_CODES],
  ['auth', '**Authorization server errors.**', authErrorCodes()],
])('the README error table of the %s catalogue', (_name, marker, codes: Readonly<Record<string, number>>) => {
  const table = readmeTable(marker);

  it.each(Object.entries(codes))('documents %s with status %i', (code, status) => {
    expect(table.get(code)).toBe(status);
  });

  it.each([...table])('documents %s, a code the catalogue has, with its status %i', (code, status) => {
    expect(codes[code]).toBe(status);
  });
});

describe('the README table of the failures of an operation', () => {
  const table = readmeTable("A failed operation's `error.code` says why the work ended");

  it.each(Object.keys(OPERATION_FAILURES))('documents %s', (code) => {
    expect(table.has(code)).toBe(true);
  });

  it.each([...table.keys()])('documents %s, a failure the catalogue has', (code) => {
    expect(Object.keys(OPERATION_FAILURES)).toContain(code);
  });
});
