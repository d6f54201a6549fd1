/**
 * Operation kinds as plug-ins, the way graphile-worker maps task names to payload types: each feature defines
 * its kind — the stored name, the zod schema of its input and its runner — with `defineOperationKind`, and the
 * composition root (service.ts) hands the list to the engine, which never imports a feature. The input is
 * typed where the operation is started (`kind.start`) and where it runs (`run` receives it parsed).
 */
import type { SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import type { OrgContext } from '../context.js';
import { failure, startOperation, type NewOperation, type RegisteredKind, type RunnerOutcome } from './operations.js';
import type { OperationKind, OperationRow } from './states.js';

/** A stored operation whose input its kind's schema has read. */
export type OperationOf<Input> = Omit<OperationRow, 'input'> & { input: Input };

export interface OperationKindDefinition<Input extends Record<string, unknown>, Held> {
  kind: OperationKind;
  input: z.ZodType<Input>;
  /**
   * Runs the work. Called again after a crash or a resume, so it must be safe to repeat. `held`: what its start
   * handed over, on the run in the process that started it; any other run reads it.
   */
  run(ctx: OrgContext, operation: OperationOf<Input>, held?: Held): Promise<RunnerOutcome>;
  /**
   * The run's first writes, folded into the start's statement when the run is here (NewOperation.firstWrites):
   * given the new operation's id, its input and what the start holds, the writes and what the run is handed.
   */
  firstWrites?(ctx: OrgContext, operationId: string, input: Input, held: Held | undefined): { writes: SQL[]; held: Held };
}

export interface DefinedKind<Input extends Record<string, unknown>, Held = never> extends RegisteredKind {
  input: z.ZodType<Input>;
  /** Writes the queued operation of this kind and its job in `db`; returns the operation's id. */
  start(ctx: OrgContext, db: Queryable, start: Omit<NewOperation, 'kind' | 'input' | 'held'> & { input: Input; held?: Held }): Promise<string>;
}

export function defineOperationKind<Input extends Record<string, unknown>, Held = never>(definition: OperationKindDefinition<Input, Held>): DefinedKind<Input, Held> {
  const { kind, input } = definition;
  return {
    kind,
    input,
    start: (ctx, db, start) =>
      startOperation(ctx, db, {
        ...start,
        kind,
        ...(definition.firstWrites && { firstWrites: (operationId: string) => definition.firstWrites!(ctx, operationId, start.input, start.held) }),
      }),
    async runStored(ctx, operation, held) {
      // Written by `start` from a value of the same schema: a row that no longer parses was changed by hand.
      const parsed = input.safeParse(operation.input);
      if (!parsed.success) return { status: 'failed', error: failure('internal_error', `the stored input of this ${kind} operation is not valid`) };
      // What `start` handed over is of this kind's `Held` (the engine carries it unread).
      return definition.run(ctx, { ...operation, input: parsed.data }, held as Held | undefined);
    },
  };
}
