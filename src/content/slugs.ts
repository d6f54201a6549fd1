/**
 * Slugs (DESIGN section 3): derived from the title — Unicode-normalised, diacritics dropped, lower case,
 * runs of other characters as one `-`, trimmed, at most 80 characters — and made unique with `-2`, `-3`, ….
 * A slug the client gives must already be in that form; if it is taken the write is refused (409).
 */
import { contentErrors } from './errors.js';
import { MAX_SLUG_LENGTH } from './fields.js';

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

export interface InsertUnderSlugOptions<Row> {
  /** The slug the client gave, if any: taken or reserved → 409. */
  given?: string;
  /** What a slug is derived from when none is given. */
  title: string;
  /** Slugs no record may take (route names such as `drafts`). */
  reserved: ReadonlySet<string>;
  /** Whether a slug is reserved or already used (committed rows). */
  isTaken: (slug: string) => Promise<boolean>;
  /** Inserts with `ON CONFLICT (slug) DO NOTHING`; undefined when the slug was taken meanwhile. */
  insert: (slug: string) => Promise<Row | undefined>;
}

/**
 * Inserts a record under the given slug or one derived from the title. Because `insert` does
 * `ON CONFLICT DO NOTHING`, a derived slug that a concurrent create took between the check and the insert
 * moves on to the next free one instead of failing the transaction, however many creates race.
 */
export async function insertUnderSlug<Row>(options: InsertUnderSlugOptions<Row>): Promise<Row> {
  const { given } = options;
  if (given) {
    if (options.reserved.has(given)) throw contentErrors.conflict(`slug '${given}' is reserved`, 'slug');
    const row = await options.insert(given);
    if (!row) throw contentErrors.conflict(`slug '${given}' is already taken`, 'slug');
    return row;
  }
  for (;;) {
    const row = await options.insert(await uniqueSlug(slugify(options.title), options.isTaken));
    if (row) return row;
  }
}
