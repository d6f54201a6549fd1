/**
 * Operation kinds as plug-ins, the way graphile-worker maps task names to payload types: each feature defines
 * its kind — the stored name, the zod schema of its input and its runner — with `defineOperationKind`, and the
 * composition root (service.ts) hands the list to the engine, which never imports a feature. The input is
 * typed where the operation is started (`kind.start`) and where it runs (`run` receives it parsed).
 */
import type { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import type { OrgContext } from '../context.js';
import { failure, startOperation, type NewOperation, type RegisteredKind, type RunnerOutcome } from './operations.js';
import type { OperationKind, OperationRow } from './states.js';

/** A stored operation whose input its kind's schema has read. */
export type OperationOf<Input> = Omit<OperationRow, 'input'> & { input: Input };

export interface OperationKindDefinition<Input extends Record<string, unknown>> {
  kind: OperationKind;
  input: z.ZodType<Input>;
  /** Runs the work. Called again after a crash or a resume, so it must be safe to repeat. */
  run(ctx: OrgContext, operation: OperationOf<Input>): Promise<RunnerOutcome>;
}

export interface DefinedKind<Input extends Record<string, unknown>> extends RegisteredKind {
  input: z.ZodType<Input>;
  /** Writes the queued operation of this kind and its job in `db`; returns the operation's id. */
  start(ctx: OrgContext, db: Queryable, start: Omit<NewOperation, 'kind' | 'input'> & { input: Input }): Promise<string>;
}

export function defineOperationKind<Input extends Record<string, unknown>>(definition: OperationKindDefinition<Input>): DefinedKind<Input> {
  const { kind, input } = definition;
  return {
    kind,
    input,
    start: (ctx, db, start) => startOperation(ctx, db, { ...start, kind }),
    async runStored(ctx, operation) {
      // Written by `start` from a value of the same schema: a row that no longer parses was changed by hand.
      const parsed = input.safeParse(operation.input);
      if (!parsed.success) return { status: 'failed', error: failure('internal_error', `the stored input of this ${kind} operation is not valid`) };
      return definition.run(ctx, { ...operation, input: parsed.data });
    },
  };
}
