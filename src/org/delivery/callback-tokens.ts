/**
 * The agent API's bearer tokens (DESIGN 4.5 `callback.token`): 256 random bits, stored only as their
 * SHA-256, bound to one operation. A token is valid until its `expires_at`, and never longer than
 * `CALLBACK_GRACE_SECONDS` after its operation ended: within that grace a late report authenticates and is
 * refused with `invalid_state` (the agent learns the work is over); after it, the token is simply wrong.
 */
import { randomBytes } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import { hashToken } from '../../auth/ids.js';
import { queryRows, type Queryable } from '../../platform/database.js';
import { fixedStatement, type Slots } from '../../platform/fixed-statement.js';
import { toIso } from '../../platform/time.js';
import { orgErrors } from '../errors.js';
import { isText } from '../fields.js';
import { callbackTokens, operations } from '../schema.js';
import type { OperationRow } from '../operations/states.js';

/** How long a token outlives its operation's end. */
export const CALLBACK_GRACE_SECONDS = 10 * 60;
/** The longest a token lives at all; each delivery (a task's answer too) hands the agent a fresh one. */
export const CALLBACK_TOKEN_SECONDS = 7 * 24 * 60 * 60;

export interface CallbackToken {
  token: string;
  expiresAt: string;
}

export async function issueCallbackToken(db: Queryable, operationId: string): Promise<CallbackToken> {
  const issued = callbackTokenStatement(operationId);
  const [row] = await queryRows<{ expires_at: string }>(db, sql`${issued.statement} RETURNING expires_at::text`);
  return { token: issued.token, expiresAt: toIso(row.expires_at) };
}

/**
 * `issueCallbackToken`'s statement, to embed in a larger one: with `from` (`FROM delivery`, a CTE of the same
 * statement) it stores the token once per row of it. `token` is what the agent is given; `expiresAt`, when the
 * caller tells the agent the expiry before the statement runs, is stored as given.
 */
export function callbackTokenStatement(operationId: string, { from, expiresAt }: { from?: SQL; expiresAt?: string } = {}): { token: string; statement: SQL } {
  const token = `cbt_${randomBytes(32).toString('base64url')}`;
  const values: TokenValues = { hash: hashToken(token), operationId, expiresAt: expiresAt ?? null };
  // Without `from` it is issued with every delivery's first attempt: its text is rendered once (fixed-statement.ts).
  return { token, statement: from ? tokenInsert(values, from) : fixedTokenInsert.bind(values) };
}

type TokenValues = { hash: string; operationId: string; expiresAt: string | null };

/** The token's INSERT, its values given or placeholders for the fixed statement; no expiry given is the longest. */
function tokenInsert(values: TokenValues | Slots<TokenValues>, from: SQL = sql``): SQL {
  return sql`INSERT INTO ${callbackTokens} (hash, operation_id, expires_at)
    SELECT ${values.hash}::text, ${values.operationId}::text,
      coalesce(${values.expiresAt}::timestamptz, now() + make_interval(secs => ${CALLBACK_TOKEN_SECONDS}::int)) ${from}`;
}

const fixedTokenInsert = fixedStatement<TokenValues>((slot) => tokenInsert(slot));

/** The operation `token` was issued for, when it is `operationId` and the token is still valid; else 401. */
export async function authenticateCallback(db: Queryable, operationId: string, token: string | undefined): Promise<OperationRow> {
  // An id or token that could never have been issued (a NUL character PostgreSQL cannot even compare) is simply wrong.
  if (token && isText(operationId) && isText(token)) {
    const [row] = await db
      .select({ operation: operations })
      .from(callbackTokens)
      .innerJoin(operations, sql`${operations.id} = ${callbackTokens.operationId}`)
      .where(
        sql`${callbackTokens.hash} = ${hashToken(token)} AND ${callbackTokens.operationId} = ${operationId}
          AND ${callbackTokens.expiresAt} > now()
          AND (${operations.finishedAt} IS NULL OR ${operations.finishedAt} > now() - make_interval(secs => ${CALLBACK_GRACE_SECONDS}))`,
      );
    if (row) return row.operation;
  }
  throw orgErrors.unauthorized('the callback token is missing, wrong or expired for this operation');
}

/** Housekeeping: tokens that can never authenticate again (past their expiry, or their operation's grace). */
export async function deleteExpiredCallbackTokens(db: Queryable): Promise<number> {
  const deleted = await db
    .delete(callbackTokens)
    .where(
      sql`${callbackTokens.expiresAt} <= now() OR ${callbackTokens.operationId} IN (
        SELECT ${operations.id} FROM ${operations}
        WHERE ${operations.finishedAt} <= now() - make_interval(secs => ${CALLBACK_GRACE_SECONDS}))`,
    )
    .returning({ hash: callbackTokens.hash });
  return deleted.length;
}
