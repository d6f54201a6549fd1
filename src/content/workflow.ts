/**
 * The editorial workflows (spec 3.1 and 3.2, DESIGN section 3) as data. A workflow is a table of moves:
 * the statuses a move leaves, the one it enters, the check a record must pass, what the activity log says.
 * `defineWorkflow` turns the moves into a platform state table (platform/state-table.ts), whose conditional
 * UPDATE applies a move and whose refusal names the record's current status; `runMove` applies a move to a
 * stored record, and `allowMove` refuses a delete the table does not allow. Blog posts and changelog entries
 * each declare their table (blog/workflow.ts, changelog/workflow.ts); the rules of applying one are written
 * here, once.
 */
import { eq, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { PgSelect } from 'drizzle-orm/pg-core';
import type { Queryable, Tx } from '../platform/database.js';
import { keysetPage, type PageRequest } from '../platform/paging.js';
import { stateTable, type StateTable } from '../platform/state-table.js';
import { orderedNow, toIso } from '../platform/time.js';
import { diffChanges, recordActivity } from './activity.js';
import type { Actor } from './actor.js';
import type { ContentContext } from './context.js';
import { contentErrors } from './errors.js';
import { requestRevalidation } from './revalidation.js';
import { blogPosts, changelogEntries, type Changes } from './schema.js';
import { writeContent } from './write.js';

/** The dates every post and entry carries (ISO 8601). */
export const workflowDates = {
  published_at: z.string().nullable().describe('set by the first publication, kept after'),
  created_at: z.string(),
  updated_at: z.string(),
};

/** A page of a workflow list: its records under `name`, the cursor of the next page and the size of the list. */
export function workflowPage<Name extends string, Record extends z.ZodType>(name: Name, record: Record) {
  const records = { [name]: z.array(record) } as { [K in Name]: z.ZodArray<Record> };
  return z.object({ ...records, next_cursor: z.string().nullable(), total: z.number().int() });
}

export interface FieldProblem {
  field: string;
  message: string;
}

/** Which statuses a move (or a delete) starts from; anything else is refused with `refusal`. */
export interface Rule<Status extends string, Row> {
  from: readonly Status[];
  /** The status entered; none for a rule that changes no status (a delete). */
  to?: Status;
  /** Who may take the move, as the refusal says it: "only a draft can be submitted". */
  refusal: string;
  /** Problems that stop the move even from an allowed status (submit validation, 422). */
  check?: (row: Row) => FieldProblem[];
}

/** A status change `runMove` writes. */
export interface Move<Status extends string, Row> extends Rule<Status, Row> {
  to: Status;
  action: 'status_changed' | 'published' | 'archived';
  summary: (row: Row) => string;
  /** The public site shows the change: its pages are rebuilt (revalidation.ts). */
  revalidates?: true;
  /** What else changes with the move, in the same transaction (a publish cancels a schedule). */
  alongside?: (ctx: ContentContext, tx: Tx, row: Row) => Promise<void>;
}

/** The stored record a workflow moves: both workflow tables have these columns. */
export interface WorkflowRow {
  id: number;
  slug: string;
  status: string;
  publishedAt: string | null;
}

type WorkflowTable = typeof blogPosts | typeof changelogEntries;

export interface WorkflowSpec<Status extends string, Row extends WorkflowRow, Name extends string, T extends WorkflowTable = WorkflowTable> {
  kind: 'blog' | 'changelog';
  table: T;
  /** How a refusal names the record: "this post is published". */
  noun: string;
  /** Reads a record by the key clients use and locks it until the transaction ends. */
  lock(tx: Tx, key: string): Promise<Row>;
  moves: Record<Name, Rule<Status, Row> | Move<Status, Row>>;
}

export interface Workflow<Status extends string, Row extends WorkflowRow, Name extends string, T extends WorkflowTable = WorkflowTable>
  extends WorkflowSpec<Status, Row, Name, T> {
  /** The moves as a state table: a move is one conditional UPDATE, refused where the table does not allow it. */
  states: StateTable<T, Status, Name>;
}

/**
 * A workflow with its state table. Every move stamps `updated_at`; entering `published` fixes `published_at`
 * the first time only (a record's place in the list). A refusal is `invalid_state` naming the current status.
 */
export function defineWorkflow<Status extends string, Row extends WorkflowRow, Name extends string, T extends WorkflowTable>(
  spec: WorkflowSpec<Status, Row, Name, T>,
): Workflow<Status, Row, Name, T> {
  const { table, moves } = spec;
  const transitions = Object.fromEntries(
    Object.entries<Rule<Status, Row>>(moves).map(([name, rule]) => [name, { from: rule.from, to: rule.to ?? null }]),
  ) as Record<Name, { from: readonly Status[]; to: Status | null }>;
  const states = stateTable({
    table,
    transitions,
    stamp: (transition) => ({
      updatedAt: sql`now()`,
      ...(transition.to === 'published' ? { publishedAt: sql`coalesce(${table.publishedAt}, ${orderedNow()})` } : {}),
    }),
    refusal: (current, event: Name) => refusal(spec.noun, moves[event], current.status),
    // Every caller locks the row before it moves it (runMove, schedulePost), so the row cannot vanish in between.
    notFound: () => new Error(`a locked ${spec.noun} vanished`),
  });
  return { ...spec, states };
}

/** The refusal of a rule for a record in `status`: "only a draft can be submitted; this post is published". */
function refusal(noun: string, rule: { refusal: string }, status: string) {
  return contentErrors.invalidState(`${rule.refusal}; this ${noun} is ${status}`, status);
}

/** How a record's editable fields are edited (blog/workflow.ts, changelog/workflow.ts). */
export interface FieldEdit<Row, R, Field extends keyof R & string> {
  fields: readonly Field[];
  toRecord(row: Row): R;
  /** The columns the edit writes, from the record as it is after the edit. */
  columns(after: R): Partial<Workflow<string, WorkflowRow, string>['table']['$inferInsert']>;
  summary(row: Row, changedFields: string[]): string;
}

/**
 * Edits the given fields of a record in any status. A field given as it already is changes nothing; an edit
 * that changes nothing writes and records nothing. An edit of a published record rebuilds its pages.
 */
export async function editFields<Status extends string, Row extends WorkflowRow, Name extends string, R extends Record<string, unknown>, Field extends keyof R & string>(
  ctx: ContentContext,
  workflow: Workflow<Status, Row, Name>,
  key: string,
  data: Partial<R>,
  edit: FieldEdit<Row, R, Field>,
  actor: Actor,
): Promise<R> {
  if (edit.fields.every((field) => data[field] === undefined)) {
    throw contentErrors.invalidRequest(`nothing to update: give any of ${edit.fields.join(', ')}`);
  }
  const result = await writeContent(ctx, workflow.kind, async (tx, changed) => {
    const row = await workflow.lock(tx, key);
    const before = edit.toRecord(row);
    const after: R = { ...before };
    for (const field of edit.fields) if (data[field] !== undefined) after[field] = data[field] as R[Field];
    const changes = diffChanges(before, after, edit.fields);
    if (Object.keys(changes).length === 0) return { record: before, revalidated: false };
    changed(row.slug);
    const { table } = workflow;
    const [updated] = (await tx
      .update(table)
      .set({ ...edit.columns(after), updatedAt: sql`now()` })
      .where(eq(table.id, row.id))
      .returning()) as Row[];
    await recordActivity(tx, actor, {
      resource: workflow.kind,
      resourceId: row.slug,
      action: 'updated',
      summary: edit.summary(updated, Object.keys(changes)),
      changes,
    });
    const revalidated = updated.status === 'published';
    if (revalidated) await requestRevalidation(ctx, tx, { type: workflow.kind, slug: row.slug });
    return { record: edit.toRecord(updated), revalidated };
  });
  if (result.revalidated) ctx.jobs.wake();
  return result.record;
}

/**
 * One page of posts or entries, newest first: published ones by `published_at`, the others by `created_at`
 * (both unique, written with `orderedNow()`), with the count of the whole list.
 */
export function workflowListPage<Query extends PgSelect>(
  db: Queryable,
  select: Query,
  table: Workflow<string, WorkflowRow, string>['table'],
  where: SQL | undefined,
  key: 'publishedAt' | 'createdAt',
  page: PageRequest,
  total: 'counted' | SQL = 'counted',
) {
  // NULLS LAST, as the published_at indexes store it (drizzle's `.desc()`).
  const order = { key, column: table[key], direction: 'newest_first', nulls: 'last' } as const;
  return keysetPage(db, { select, from: table, where, order, total }, page);
}

/** Refuses a rule that changes no status (a delete) unless the table lists the record's status. */
export function allowMove<Status extends string, Row extends WorkflowRow>(noun: string, rule: Rule<Status, Row>, row: Row): void {
  if (!rule.from.includes(row.status as Status)) throw refusal(noun, rule, row.status);
}

export interface RunMoveOptions {
  /**
   * A record already in the move's target status: `refused` (the table decides, as REST's named moves do) or
   * `unchanged` (the move is a no-op that records nothing, as a repeated publish is).
   */
  whenAlreadyThere?: 'refused' | 'unchanged';
}

/**
 * Locks the record, applies the move through the state table and records it, in one content write. A move
 * with a check (submit validation) is checked only from a status the table allows, so a record in the wrong
 * status hears 409 invalid_state, not 422.
 */
export async function runMove<Status extends string, Row extends WorkflowRow, Name extends string>(
  ctx: ContentContext,
  workflow: Workflow<Status, Row, Name>,
  name: Name,
  key: string,
  actor: Actor,
  options: RunMoveOptions = {},
): Promise<Row> {
  const move = workflow.moves[name] as Move<Status, Row>;
  const result = await writeContent(ctx, workflow.kind, async (tx, changed) => {
    const row = await workflow.lock(tx, key);
    if (row.status === move.to && options.whenAlreadyThere === 'unchanged') return { row, moved: false };
    const problems = move.from.includes(row.status as Status) ? (move.check?.(row) ?? []) : [];
    if (problems.length > 0) throw contentErrors.validationFailed(problems);
    const moved = (await workflow.states.move(tx, row.id, name)) as unknown as Row;
    changed(row.slug);
    await move.alongside?.(ctx, tx, row);
    const changes: Changes = { status: [row.status, move.to] };
    if (moved.publishedAt !== row.publishedAt) changes.published_at = [toIso(row.publishedAt), toIso(moved.publishedAt)];
    await recordActivity(tx, actor, { resource: workflow.kind, resourceId: row.slug, action: move.action, summary: move.summary(row), changes });
    if (move.revalidates) await requestRevalidation(ctx, tx, { type: workflow.kind, slug: row.slug });
    return { row: moved, moved: true };
  });
  if (result.moved && move.revalidates) ctx.jobs.wake();
  return result.row;
}
