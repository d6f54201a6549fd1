/**
 * zod pieces every org MCP tool and the agent API build their inputs from, so that all of them refuse the same
 * bad input the same way — `invalid_request` naming the field, before anything runs — rather than letting it
 * reach PostgreSQL and fail there as an internal error (issue 16):
 *
 * - text never holds a NUL character (PostgreSQL's `text` and `jsonb` cannot store one) nor half of a UTF-16
 *   surrogate pair (not Unicode; `jsonb` refuses its escape);
 * - a JSON value holds no such string, in its values or its member names, and nests at most 64 levels
 *   (platform/json-depth.ts);
 * - an instant is one PostgreSQL stores and the service shows again: years 0001 to 9999, offsets within
 *   ±15:59 (platform/time.ts).
 */
import { z } from 'zod';
import { MAX_JSON_DEPTH, textProblem, walkJson } from '../platform/json-depth.js';
import { dateProblem, isIsoDate } from '../platform/time.js';

export { textProblem };

/** Whether `value` can be stored as text. */
export function isText(value: string): boolean {
  return textProblem(value) === undefined;
}

const checkText = (value: string, issue: z.RefinementCtx) => {
  const problem = textProblem(value);
  if (problem) issue.addIssue({ code: 'custom', message: problem, input: value });
};

/** A string that can be stored: chain `.trim()`, `.min()`, `.max()` and `.describe()` as on `z.string()`. */
export function text() {
  return z.string().superRefine(checkText);
}

/** An id as tools take them: opaque, 1–200 characters. */
export function id(description?: string) {
  const field = text().min(1).max(200);
  return description === undefined ? field : field.describe(description);
}

const checkJson = (value: unknown, issue: z.RefinementCtx) => {
  const { problem, path } = walkJson(value, MAX_JSON_DEPTH, textProblem);
  if (problem) issue.addIssue({ code: 'custom', message: problem, path: path ?? [], input: value });
};

/** Any JSON value (a result, an answer), with storable strings and at most 64 levels deep. */
export function jsonValue() {
  return z.unknown().superRefine(checkJson);
}

/** A JSON object (a capability's input), with storable strings and at most 64 levels deep. */
export function jsonObject() {
  return z.record(z.string(), z.unknown()).superRefine(checkJson);
}

const checkInstant = (value: string, issue: z.RefinementCtx) => {
  const problem = dateProblem(value);
  if (problem) issue.addIssue({ code: 'custom', message: problem, input: value });
};

/** An instant with its offset (spec 4.2 rule 3: no zone is assumed), one PostgreSQL stores; kept as given. */
export function instant() {
  return z.iso.datetime({ offset: true }).superRefine(checkInstant);
}

/** A list's cursor that is the ISO timestamp of the last item shown (DESIGN: lists and cursors). */
export function dateCursor() {
  return z.string().max(40).refine(isIsoDate, 'an ISO 8601 date-time: the next_cursor of the previous page');
}
