/**
 * Statements of one shape whose text drizzle renders once.
 *
 * drizzle renders a statement anew on every call: it walks each fragment the statement was composed of, merging
 * the text and the parameters of every level into new strings and arrays. For the writes of a work round trip
 * (an operation's start: its row, its entries, its delivery, the delivery's next attempt and callback token, the
 * job, in one statement) that walk, with the builders it walks, was a quarter of what the organization's process
 * allocated per call (bench/RESULTS.md, session 52). A fixed statement is built once with a placeholder for each
 * value (`slot.name`, or `sql.param(slot.name, column)` for a value its column encodes), rendered once by drizzle's
 * own dialect, and bound per call: the rendered text in pieces and each value as a parameter, encoded as drizzle
 * fills the placeholders of a prepared query (`fillPlaceholders`). What `bind` returns is plain SQL, so it runs on
 * either engine, in a transaction or not, and can be a fragment of a larger statement. With the start's row, job,
 * delivery and token bound this way, an operation's start went from about 9 % to 6 % of the organization's busy
 * time in message_agent, drizzle's own share from about 10 % to 8 % (bench/RESULTS.md, session 53).
 */
import { getTableColumns, is, Param, Placeholder, SQL, sql, StringChunk, type DriverValueEncoder, type SQLChunk } from 'drizzle-orm';
import { PgDialect, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';

/** A placeholder for each value of the statement, by the value's name. */
export type Slots<Values> = { readonly [Name in keyof Values & string]: Placeholder<Name> };

export interface FixedStatement<Values> {
  /** The statement with these values (each given, `null` for SQL's NULL). */
  bind(values: Values): SQL;
}

export function fixedStatement<Values extends object>(build: (slot: Slots<Values>) => SQL): FixedStatement<Values> {
  let rendered: Rendered | undefined;
  return {
    bind(values) {
      // Rendered on first use, not when the module loads (the tables it names may not be defined yet).
      rendered ??= render(build(slots() as Slots<Values>));
      const { pieces, parameters } = rendered;
      const chunks: unknown[] = [pieces[0]];
      for (let i = 0; i < parameters.length; i++) chunks.push(parameters[i]!(values as Record<string, unknown>), pieces[i + 1]);
      return new SQL(chunks as SQLChunk[]);
    },
  };
}

/**
 * A value (already encoded for the driver) as a chunk of a statement. A string, number, boolean or null is left
 * bare: drizzle renders a bare value as a parameter, and tells it from its own chunks at its first look (not an
 * object), where a `Param` is told apart by a walk of its class for each kind of chunk drizzle has. Anything else
 * (an array would be rendered as a list) is wrapped as a `Param`, as drizzle's own builders wrap it.
 */
function bareParam(value: unknown): SQLChunk {
  return (typeof value === 'object' && value !== null ? new Param(value) : value) as SQLChunk;
}

/** `value` encoded by its column (null stays NULL, as drizzle's `Param` keeps it), as a chunk (`bareParam`). */
export function encodedParam(value: unknown, encoder: DriverValueEncoder<unknown, unknown>): SQLChunk {
  return bareParam(value === null ? null : encoder.mapToDriverValue(value));
}

interface Rendered {
  /** The text between parameters: one more piece than parameters. */
  pieces: StringChunk[];
  /** Each parameter, in order, as a chunk made from the values bound. */
  parameters: Array<(values: Record<string, unknown>) => SQLChunk>;
}

const dialect = new PgDialect();

/** Any name read of it is a placeholder of that name. */
const slots = () => new Proxy({}, { get: (_, name) => sql.placeholder(String(name)) });

function render(statement: SQL): Rendered {
  const query = dialect.sqlToQuery(statement);
  // `$1`, `$2`, … in order, one per parameter: the dialect numbers them as it meets them. Anything else (a `$n` in
  // a literal the statement spells out) would misplace the values, so it is refused when the statement is first used.
  const split = query.sql.split(/\$(\d+)/);
  const numbers = split.filter((_, i) => i % 2 === 1);
  if (numbers.length !== query.params.length || numbers.some((number, i) => Number(number) !== i + 1)) {
    throw new Error(`a fixed statement's text must number its parameters in order: ${query.sql}`);
  }
  return {
    pieces: split.filter((_, i) => i % 2 === 0).map((piece) => new StringChunk(piece)),
    parameters: query.params.map(parameter),
  };
}

function parameter(param: unknown): (values: Record<string, unknown>) => SQLChunk {
  if (is(param, Param) && is(param.value, Placeholder)) {
    const { encoder } = param;
    const read = value(param.value.name);
    return (values) => encodedParam(read(values), encoder);
  }
  if (is(param, Placeholder)) {
    const read = value(param.name);
    return (values) => bareParam(read(values));
  }
  // A value written into the statement when it was built: the same on every call.
  const constant = bareParam(param);
  return () => constant;
}

function value(name: string): (values: Record<string, unknown>) => unknown {
  return (values) => {
    const given = values[name];
    if (given === undefined) throw new Error(`no value for "${name}" in a fixed statement`);
    return given;
  };
}

/**
 * `INSERT INTO <table> (<columns>) VALUES (…)` of the row's `keys` as a fixed statement: each value encoded by its
 * column, as drizzle's insert builder encodes it; the columns not named take their defaults.
 */
export function fixedInsert<T extends PgTable, Key extends keyof T['$inferInsert'] & string>(table: T, keys: readonly Key[]): FixedStatement<Required<Pick<T['$inferInsert'], Key>>> {
  const columns = getTableColumns(table) as Record<string, PgColumn>;
  return fixedStatement<Record<string, unknown>>((slot) => {
    const names = sql.raw(keys.map((key) => `"${columns[key]!.name}"`).join(', '));
    const values = sql.join(keys.map((key) => sql.param(slot[key]!, columns[key])), sql`, `);
    return sql`INSERT INTO ${table} (${names}) VALUES (${values})`;
  });
}
