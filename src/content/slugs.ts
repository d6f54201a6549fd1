/**
 * Slugs (DESIGN section 3): derived from the title — Unicode-normalised, diacritics dropped, lower case,
 * runs of other characters as one `-`, trimmed, at most 80 characters — and made unique with `-2`, `-3`, ….
 * A slug the client gives must already be in that form; if it is taken the write is refused (409).
 */
import { z } from 'zod';

export const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const MAX_SLUG_LENGTH = 80;

export const slugSchema = z
  .string()
  .max(MAX_SLUG_LENGTH)
  .regex(SLUG_PATTERN, 'lower-case letters, digits and single dashes, e.g. my-first-post');

export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, '');
  return slug || 'untitled';
}

/**
 * The first of `base`, `base-2`, `base-3`, … that `isTaken` says is free; the base is shortened so the
 * suffix still fits in 80 characters.
 */
export async function uniqueSlug(base: string, isTaken: (slug: string) => Promise<boolean>): Promise<string> {
  if (!(await isTaken(base))) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, MAX_SLUG_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!(await isTaken(candidate))) return candidate;
  }
}
