/**
 * Pieces the console's pages share: the spaces a viewer may see, query-string fields that treat an empty form
 * field as absent, a filter's select with "Any", the select of a form's space, times people read, status badges, JSON
 * shown bounded, the links to the next page of a keyset list, the not-found answer, the link from an activity entry
 * to what it is about, and the page that asks before something is removed for good.
 */
import type { FastifyReply } from 'fastify';
import { Fragment, type ComponentChildren, type VNode } from 'preact';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import type { ActivityEntry } from '../activity/records.js';
import type { RuleConditions } from '../gate/index.js';
import { toIso } from '../../platform/time.js';
import { id, text } from '../fields.js';
import { listSpaces, listSpacesOfPerson, type Space } from '../spaces/records.js';
import type { ConsolePage, Scope } from './console.js';
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

/** A stored timestamp (PostgreSQL's text form or ISO) for people, machine-readable in `datetime`. */
export function Time({ value }: { value: string | null | undefined }): VNode {
  if (!value) return <span class="muted">—</span>;
  const iso = toIso(value);
  return <time dateTime={iso}>{formatTime(iso)}</time>;
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

/** `path` with the query's given, non-empty fields as its query string. */
export function pageHref(path: string, query: Record<string, string | undefined>): string {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')).toString();
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

/** An id chosen in a filter. */
export const optionalId = () => optionalField(id());

/** A status, verdict or risk as a coloured word (console.css `.badge <value>`). */
export function Badge({ value }: { value: string }): VNode {
  return <span class={`badge ${value}`}>{value.replace(/_/g, ' ')}</span>;
}

/** JSON as people read it, cut at `limit` characters (a result may be up to a MiB) with a note saying so. */
export function BoundedJson({ value, limit = 4096 }: { value: unknown; limit?: number }): VNode {
  const text = JSON.stringify(value, null, 2) ?? String(value);
  if (text.length <= limit) return <pre><code>{text}</code></pre>;
  return (
    <>
      <pre><code>{`${text.slice(0, limit)}…`}</code></pre>
      <p class="muted">
        Shortened: the first {limit.toLocaleString('en')} of {text.length.toLocaleString('en')} characters are shown.
      </p>
    </>
  );
}

/** The link to the next (older) page of a list whose link the page builds itself, when there is one. */
export function OlderLink({ next, label = 'Older' }: { next: string | null; label?: string }): VNode | null {
  if (!next) return null;
  return (
    <nav class="pager" aria-label="More">
      <span />
      <a href={next} rel="next">
        {label}
      </a>
    </nav>
  );
}

/** A filter's select: "Any" (no filter; `anyLabel` words it) and the choices, the chosen one selected. */
export function AnySelect({
  name,
  label,
  value,
  options,
  anyLabel = 'Any',
}: {
  name: string;
  label: string;
  value: string | undefined;
  options: { value: string; label: string }[];
  anyLabel?: string;
}): VNode {
  return (
    <label>
      {label}
      <select name={name}>
        <option value="">{anyLabel}</option>
        {options.map((option) => (
          <option key={option.value} value={option.value} selected={option.value === value}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * The space a console form places its work in, as `space_id`: one of the person's own spaces, the chosen one selected
 * (`none` adds a first choice of no one space, as asking from all of them).
 */
export function SpaceSelect({
  id: fieldId,
  spaces,
  value,
  none,
  describedBy,
}: {
  id: string;
  spaces: readonly Space[];
  value: string | undefined;
  none?: string;
  describedBy?: string;
}): VNode {
  return (
    <select id={fieldId} name="space_id" aria-describedby={describedBy}>
      {none === undefined ? null : <option value="">{none}</option>}
      {spaces.map((space) => (
        <option key={space.id} value={space.id} selected={value === space.id}>
          {space.name}
        </option>
      ))}
    </select>
  );
}

/** An unknown id and one outside the reader's scope get the same answer. */
export function notFound(reply: FastifyReply, what: string, back: { href: string; name: string }): ConsolePage {
  reply.code(404);
  return {
    title: 'Not found',
    body: (
      <>
        <h1>Not found</h1>
        <p>
          There is no {what} with this id that you can see. <a href={back.href}>Back to {back.name}</a>
        </p>
      </>
    ),
  };
}

/**
 * A rule's conditions in words beside the capability (which the capability's page already names); the rules page
 * puts the capability in front.
 */
export function describeConditions(when: RuleConditions): string {
  const list = (value: string | readonly string[]) => (typeof value === 'string' ? value : value.join(', '));
  const parts: string[] = [];
  if (when.agent !== undefined) parts.push(`agent ${list(when.agent)}`);
  if (when.risk !== undefined) parts.push(`risk ${list(when.risk)}`);
  if (when.weekdays) parts.push(`on ${when.weekdays.join(', ')}`);
  if (when.hours) parts.push(`between ${when.hours}`);
  if ((when.weekdays || when.hours) && when.timezone) parts.push(`(${when.timezone})`);
  if (when.input !== undefined) {
    const conditions = Array.isArray(when.input) ? when.input : [when.input];
    // A learned rule bound to one approved input (path "") is not shown that input: it came from one space's work.
    for (const condition of conditions) {
      parts.push(condition.path === '' ? 'only the exact input that was approved' : `input ${condition.path} ${condition.op} ${(JSON.stringify(condition.value) ?? '').slice(0, 200)}`);
    }
  }
  return parts.length ? parts.join(' · ') : 'always';
}

/**
 * A table's header row: one column per name, then (with `action`) a last column for the row's buttons, named for
 * screen readers only.
 */
export function ColumnHeads({ names, action }: { names: readonly string[]; action?: string }): VNode {
  return (
    <thead>
      <tr>
        {names.map((name) => (
          <th key={name} scope="col">
            {name}
          </th>
        ))}
        {action ? (
          <th scope="col">
            <span class="visually-hidden">{action}</span>
          </th>
        ) : null}
      </tr>
    </thead>
  );
}

/**
 * The records with a page of their own, by their id's prefix (ids.ts): an entry about one of them links to it. The
 * page applies its own scope, which matches the log's (the record's space; a decision's page sends a person who may
 * see it but not decide it to its operation's), so a link leads to what the entry names.
 */
const SUBJECT_PAGES = new Map([
  ['tsk', { path: '/tasks/', label: 'task' }],
  ['dec', { path: '/inbox/decisions/', label: 'decision' }],
  ['mem', { path: '/memory/', label: 'memory item' }],
  ['op', { path: '/operations/', label: 'operation' }],
  ['agt', { path: '/agents/', label: 'agent' }],
  ['cap', { path: '/capabilities/', label: 'capability' }],
  ['ep', { path: '/events/', label: 'endpoint' }],
]);

/** A link to the record the entry is about, unless the entry's row already links it as its operation or capability. */
export function SubjectLink({ entry }: { entry: Pick<ActivityEntry, 'subject' | 'operationId' | 'capabilityId'> }): VNode | null {
  const subject = entry.subject;
  if (!subject || subject === entry.operationId || subject === entry.capabilityId) return null;
  const page = SUBJECT_PAGES.get(/^([a-z]+)_/.exec(subject)?.[1] ?? '');
  if (!page) return null;
  return (
    <>
      {' '}
      · <a href={`${page.path}${encodeURIComponent(subject)}`}>{page.label}</a>
    </>
  );
}

/**
 * The page that asks before a removal that cannot be undone: what goes with it, then the confirming form (the same
 * POST with `confirm=yes`) and a way back that changes nothing.
 */
export function ConfirmPage({
  title,
  children,
  action,
  fields = {},
  csrf,
  confirm,
  keep,
}: {
  title: string;
  children: ComponentChildren;
  action: string;
  fields?: Record<string, string>;
  csrf: string;
  confirm: string;
  keep: { href: string; label: string };
}): VNode {
  return (
    <>
      <h1>{title}</h1>
      <p>{children}</p>
      <form method="post" action={action}>
        <input type="hidden" name="csrf" value={csrf} />
        {Object.entries(fields).map(([name, value]) => (
          <input key={name} type="hidden" name={name} value={value} />
        ))}
        <input type="hidden" name="confirm" value="yes" />
        <div class="actions">
          <button type="submit">{confirm}</button>
          <a href={keep.href}>{keep.label}</a>
        </div>
      </form>
    </>
  );
}
