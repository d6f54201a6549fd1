/**
 * Pieces the console's list and record pages share: the spaces a viewer may see, query-string fields that
 * treat an empty form field as absent, times people read, and the link to the next page of a keyset list.
 */
import { Fragment, type VNode } from 'preact';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { text } from '../fields.js';
import { listSpaces, listSpacesOfPerson, type Space } from '../spaces/records.js';
import type { Scope } from './console.js';
import { formatTime } from './format.js';

/** The spaces whose records the viewer sees: every space for an owner or admin, their own for anyone else. */
export async function visibleSpaces(db: Queryable, scope: Scope): Promise<Space[]> {
  return scope.all ? listSpaces(db) : listSpacesOfPerson(db, scope.personId);
}

/** A query-string field a form may send empty (an untouched filter): empty means absent. */
export function optionalField<Schema extends z.ZodType>(schema: Schema) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

/** A cursor as a page link carries it: checked by the list it belongs to. */
export const cursorField = optionalField(text().max(1000));

export function Time({ value }: { value: string | null | undefined }): VNode {
  return value ? <time dateTime={value}>{formatTime(value)}</time> : <>—</>;
}

/** "Next page" (and back to the first) for a keyset list; `query` is the page's query string without its cursor. */
export function Pager({
  path,
  query,
  cursor,
  next,
  label,
  param = 'cursor',
}: {
  path: string;
  query: Record<string, string | undefined>;
  cursor?: string;
  next: string | null;
  label: string;
  /** The cursor's name in the query string (a page with two lists pages each with its own). */
  param?: string;
}): VNode | null {
  if (!next && !cursor) return null;
  const href = (page: string | undefined) => pageHref(path, { ...query, [param]: page });
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      {cursor ? <a href={href(undefined)}>First page</a> : <span />}
      {next ? <a href={href(next)}>Next page</a> : null}
    </nav>
  );
}

/** `path` with the query's given fields as its query string. */
export function pageHref(path: string, query: Record<string, string | undefined>): string {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString();
  return search ? `${path}?${search}` : path;
}

/** A space's name by id, or the id itself for one the viewer cannot name. */
export function spaceNamer(spaces: readonly Space[]): (id: string | null | undefined) => string {
  const names = new Map(spaces.map((space) => [space.id, space.name]));
  return (id) => (id ? (names.get(id) ?? id) : '—');
}

/** The text as its author wrote it: paragraphs at blank lines. */
export function Body({ text: body }: { text: string }): VNode {
  return (
    <div>
      {body.split(/\n{2,}/).map((paragraph, index) => (
        <p key={index}>
          {paragraph.split('\n').map((line, at) => (
            <Fragment key={at}>
              {at > 0 ? <br /> : null}
              {line}
            </Fragment>
          ))}
        </p>
      ))}
    </div>
  );
}
