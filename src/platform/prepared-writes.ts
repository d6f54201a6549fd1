/**
 * Repeated writes prepared on each PostgreSQL connection, by their text.
 *
 * node-postgres sends a statement without a name to be parsed and planned anew every time. The organization's work
 * round trips are a few large writes of fixed shape (an operation's start: its row, its entries, its job, the
 * delivery, the callback token; its end: the move, the settlement, the entries) whose parse and plan is about half of
 * what PostgreSQL spends on them, and their values are parameters, so one text serves every call. A write seen
 * again in this process gets a name derived from its text, and each connection then parses it once and binds it
 * after — what pgx's statement cache and Npgsql's automatic preparation do; node-postgres has no such option, and
 * drizzle's `prepare()` needs a statement built once with placeholders (database.ts `hotStatement`), which the
 * composed writes are not.
 *
 * Only writes: their rows are named by key, so a generic plan serves every value. A read's best plan can depend on
 * its values (a common word against a rare one at a million rows), which a generic plan would lose. Bounded: a
 * connection holds at most `PER_CONNECTION` of them and never drops one (dropping one a queued statement is about to
 * bind would fail it); past that, writes go unnamed as before. The process names at most `KNOWN_TEXTS` texts, none
 * longer than `LONGEST_TEXT`. Statements seen once (a first start's, a migration's) are never prepared. A connection
 * the pool replaces (pg-pool ends one whose statement failed) prepares each write again the first time it runs one.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';

/** Prepared writes one connection holds at most: well above the distinct writes a process repeats (a few dozen). */
export const PER_CONNECTION = 64;
/** Distinct write texts this process names at most, and counts at most before it forgets the ones seen once. */
const KNOWN_TEXTS = 500;
/** A longer write is a bulk one whose text changes with its rows (an import, a seed): never worth a name. */
const LONGEST_TEXT = 8_192;

/** Write texts seen once in this process; seen again, a text is named (and so prepared). */
const seenOnce = new Set<string>();
const names = new Map<string, string>();

function isWrite(text: string): boolean {
  const first = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase();
  if (first === 'insert' || first === 'update' || first === 'delete') return true;
  return first === 'with' && /\b(insert|update|delete)\b/i.test(text);
}

/** The name a write gets once it has been seen before; undefined while it has not (or is not a write). */
function preparedName(text: string): string | undefined {
  // A read is told by its first word, before the text is hashed for the lookup: most statements are reads.
  if (text.length > LONGEST_TEXT || !isWrite(text)) return undefined;
  const known = names.get(text);
  if (known || names.size >= KNOWN_TEXTS) return known;
  if (!seenOnce.has(text)) {
    // Full of texts seen once (statements whose shape varies): forget them, so a write repeated later still counts.
    if (seenOnce.size >= KNOWN_TEXTS) seenOnce.clear();
    seenOnce.add(text);
    return undefined;
  }
  seenOnce.delete(text);
  const name = `w_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  names.set(text, name);
  return name;
}

interface QueryConfig {
  text: string;
  name?: string;
  submit?: unknown;
}

/** A plain statement config without a name (not a text alone, a named statement, nor a submittable such as a cursor). */
const isQueryConfig = (value: unknown): value is QueryConfig =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as QueryConfig).text === 'string' &&
  !(value as QueryConfig).name &&
  typeof (value as QueryConfig).submit !== 'function';

/** pg.Client naming repeated writes (above); a pool made with `Client: PreparingClient` uses it for every connection. */
export class PreparingClient extends pg.Client {
  readonly #prepared = new Set<string>();

  // node-postgres's overloads all take the statement first (a text or a config object); the rest pass through.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const [statement] = args;
    if (isQueryConfig(statement)) {
      const name = preparedName(statement.text);
      if (name && (this.#prepared.has(name) || this.#prepared.size < PER_CONNECTION)) {
        this.#prepared.add(name);
        args[0] = { ...statement, name };
      }
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return (super.query as (...rest: any[]) => any)(...args);
  }
}
