/**
 * A state machine as data (STYLE: "a state machine is a table and one function that applies it").
 *
 * `stateTable()` takes the table of events — the statuses each one leaves and the one it enters — and builds
 * `move()`, which applies an event to a stored row with one conditional UPDATE whose `WHERE status IN (…)` comes
 * from the table, so two writers racing on one row cannot both win. When nothing moved, it reads the row and
 * throws the refusal naming the status the row is really in, or the row's `not_found`. Operations, tasks,
 * decisions and the content workflows each declare their table; the rule of applying one is written here once.
 */
import { Column, eq, getTableColumns, is, sql, SQL, type WithSubquery } from 'drizzle-orm';
import type { PgColumn, PgTable, PgUpdateSetSource, SelectedFields } from 'drizzle-orm/pg-core';
import { inTransaction, queryRows, type Queryable } from './database.js';
import { encodedParam } from './fixed-statement.js';
import { isAppError } from './errors.js';

export interface Transition<Status extends string> {
  readonly from: readonly Status[];
  /** The status entered; null for an event that keeps the status but is refused where `from` does not list it. */
  readonly to: Status | null;
}

/** A table whose rows a state table moves: an `id` key and a `status`. */
type MovableTable = PgTable & { id: PgColumn; status: PgColumn };

/** What `move()` reads of a row it could not move: its status, and whatever the refusal needs besides. */
export type Current<Status extends string, Explain extends Record<string, unknown>> = { status: Status } & Explain;

export interface StateTableSpec<T extends MovableTable, Status extends string, Event extends string, Explain extends Record<string, unknown>, Told = never> {
  table: T;
  transitions: { readonly [E in Event]: Transition<Status> };
  /** Columns every move writes beside the status (its `updated_at`, a `finished_at` on settling). */
  stamp?: (transition: Transition<Status>) => PgUpdateSetSource<T>;
  /** A condition beyond the status that an event needs (a decision is approved only before it expires). */
  guard?: (event: Event) => SQL | undefined;
  /** Read beside the status when nothing moved, for the refusal (whether a decision is past its expiry). */
  explain?: { [K in keyof Explain]: SQL.Aliased<Explain[K]> | SQL<Explain[K]> };
  /** The refusal of `event` from the row as it stands. */
  refusal: (current: Current<Status, Explain>, event: Event) => Error;
  notFound: () => Error;
  /**
   * Written with every move that happened, in its transaction (an audit entry): the move and this commit
   * together or not at all. A refused move writes nothing of it.
   */
  moved?: (db: Queryable, row: T['$inferSelect'], event: Event) => Promise<void>;
  /**
   * `moved` as statements (INSERTs of an audit entry, a queued job), for the tables whose moves are hot: each
   * statement writes only where `when` holds. Built from the row as it stands after the move; a caller that
   * holds the row (`move(db, row, …)`) gets the move and these in one statement — no transaction, one round
   * trip — so they may read only fields of the row that no move changes but through its `changes`. `told`: what
   * that caller adds to them (an operation's move records the entries of what led to it first), written whatever
   * the move comes to.
   */
  movedWrites?: (row: T['$inferSelect'], event: Event, when: SQL, told: Told | undefined) => SQL[];
}

export interface StateTable<T extends MovableTable, Status extends string, Event extends string, Told = never> {
  readonly transitions: { readonly [E in Event]: Transition<Status> };
  /**
   * Applies `event` to the row `id` (or to `held`, the row as the caller read it), setting `changes` beside the
   * status, or throws the refusal (or not_found) and changes nothing of the row. `alongside`: writes that go with
   * the move in the same statement (they run whether it moves or not).
   */
  move(
    db: Queryable,
    target: string | number | { held: T['$inferSelect']; told?: Told },
    event: Event,
    changes?: PgUpdateSetSource<T>,
    alongside?: WithSubquery[],
  ): Promise<T['$inferSelect']>;
}

export function stateTable<T extends MovableTable, Status extends string, Event extends string, Explain extends Record<string, unknown> = Record<never, never>, Told = never>(
  spec: StateTableSpec<T, Status, Event, Explain, Told>,
): StateTable<T, Status, Event, Told> {
  const { table, transitions } = spec;
  const shape = tableShape(table);
  // Each event's `status IN (…)`, made once; its statuses go as bare parameters (fixed-statement.ts).
  const leaving = Object.fromEntries(
    Object.entries<Transition<Status>>(transitions).map(([event, { from }]) => [
      event,
      from.length ? sql`${table.status} IN (${sql.join(from.map((status) => sql`${status}`), sql`, `)})` : sql`false`,
    ]),
  ) as Record<Event, SQL>;
  return {
    transitions,
    async move(db, target, event, changes = {}, alongside = []) {
      const { held, told } = typeof target === 'object' ? target : { held: undefined, told: undefined };
      const id = held ? (held as { id: string | number }).id : (target as string | number);
      const transition: Transition<Status> = transitions[event];
      const set = {
        ...changes,
        ...spec.stamp?.(transition),
        ...(transition.to === null ? {} : { status: transition.to }),
      } as PgUpdateSetSource<T>;
      const guard = spec.guard?.(event);
      const where = sql`${table.id} = ${id} AND ${leaving[event]}${guard ? sql` AND (${guard})` : sql``}`;
      const update = async (on: Queryable) => {
        const [row] = (await (alongside.length ? on.with(...alongside) : on).update(table).set(set).where(where).returning()) as T['$inferSelect'][];
        return row;
      };
      const { moved, movedWrites } = spec;
      let row: T['$inferSelect'] | undefined;
      if (held && movedWrites) {
        // One statement: the move, and what goes with it only if it moved.
        const after = { ...held, ...plainValues(set) } as T['$inferSelect'];
        const writes = movedWrites(after, event, sql`EXISTS (SELECT FROM moved)`, told);
        const [moved] = await queryRows<Record<string, unknown>>(db, movedStatement(shape, set, where, alongside, writes));
        row = moved && rowOf(shape, moved);
      } else if (moved || movedWrites) {
        // The refusal is thrown after the transaction, so `alongside` stands as it does without one.
        row = await inTransaction(db, async (tx) => {
          const updated = await update(tx);
          if (updated && moved) await moved(tx, updated, event);
          if (updated && movedWrites) for (const write of movedWrites(updated, event, sql`true`, undefined)) await tx.execute(write);
          return updated;
        });
      } else {
        row = await update(db);
      }
      if (row) return row;
      const fields = { status: table.status, ...spec.explain } as SelectedFields;
      const [current] = (await db.select(fields).from(table as PgTable).where(eq(table.id, id))) as Current<Status, Explain>[];
      if (!current) throw spec.notFound();
      throw spec.refusal(current, event);
    },
  };
}

/**
 * What the one-statement move needs of its table, made once: its columns by key, and their names as one fragment.
 * The hot moves (an operation's end) are built by hand from these rather than through drizzle's update and select
 * builders, which render every column of the table twice per call (the RETURNING, then the CTE's selection): drizzle's
 * share of the organization's CPU in a work round trip went from about 14 % to 10 % (bench/RESULTS.md, session 51).
 */
interface TableShape {
  table: PgTable;
  columns: [key: string, column: PgColumn][];
  byKey: Record<string, PgColumn>;
  names: SQL;
}

function tableShape(table: MovableTable): TableShape {
  const byKey = getTableColumns(table) as Record<string, PgColumn>;
  const columns = Object.entries(byKey);
  return { table, columns, byKey, names: sql.raw(columns.map(([, column]) => `"${column.name}"`).join(', ')) };
}

/**
 * `WITH <alongside>, moved AS (UPDATE … RETURNING <columns>), moved_<i> AS (<write i>) SELECT <columns> FROM moved`:
 * the statement drizzle's `db.with(…).select().from(moved)` makes, its values sent as parameters the same way (each
 * through its column's encoder, as the update builder does).
 */
function movedStatement(shape: TableShape, set: Record<string, unknown>, where: SQL | undefined, alongside: WithSubquery[], writes: SQL[]): SQL {
  const assignments = Object.entries(set)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => {
      const column = shape.byKey[key]!;
      return sql`${sql.identifier(column.name)} = ${computed(value) ? value : encodedParam(value, column)}`;
    });
  const update = sql`UPDATE ${shape.table} SET ${sql.join(assignments, sql`, `)} WHERE ${where} RETURNING ${shape.names}`;
  const ctes = [
    ...alongside.map((query) => sql`${sql.identifier(query._.alias)} AS (${query._.sql})`),
    sql`moved AS (${update})`,
    ...writes.map((write, i) => sql`${sql.raw(`moved_${i}`)} AS (${write})`),
  ];
  return sql`WITH ${sql.join(ctes, sql`, `)} SELECT ${shape.names} FROM moved`;
}

/** A row the statement returned as the table's row: each column decoded as drizzle's select decodes it. */
function rowOf<Row>(shape: TableShape, raw: Record<string, unknown>): Row {
  const row: Record<string, unknown> = {};
  for (const [key, column] of shape.columns) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as Row;
}

/** A `SET` value the database computes: SQL (a stamp's `now()`) or another column, as drizzle's update builder takes them. */
function computed(value: unknown): value is SQL | Column {
  return is(value, SQL) || is(value, Column);
}

/** The values of a `SET` that are values, not what the database computes. */
function plainValues(set: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(set).filter(([, value]) => !computed(value)));
}

/**
 * For a move that may lose a race it does not mind losing (another process, or a person, moved the row first):
 * the other move stands and this refusal is dropped. Anything else is thrown on.
 */
export function ignoreLostRace(error: unknown): undefined {
  if (isAppError(error) && error.code === 'invalid_state') return undefined;
  throw error;
}
