/**
 * Task schedules (DESIGN 4.1, 4.3; spec 4.2 rule 3): one-shot `{at, timezone}` or recurring `{cron, timezone}`.
 * No default time zone exists: every schedule names an IANA zone, and its runs are computed in that zone by
 * `croner`, so "every day at 09:00 in Europe/Berlin" stays at 09:00 local time across daylight-saving changes.
 *
 * - `at` is a local wall-clock date-time in `timezone`, `YYYY-MM-DDTHH:MM[:SS]`, without an offset: an offset
 *   or `Z` is refused, because a client sending `09:00Z` with `Europe/Berlin` may mean either zone, and a task
 *   must not fire an hour off. A time that does not exist in the zone (skipped by a spring-forward change) is
 *   refused too; a time that occurs twice (autumn) means its first occurrence.
 * - `cron` has five fields (minute hour day-of-month month day-of-week) or is a nickname such as `@daily`.
 *   Across DST changes croner follows Vixie cron: a fixed-time job (one value in minute and hour, such as
 *   `30 2 * * *`) whose time falls in a spring-forward gap runs at the first valid time after the gap on that
 *   day (03:00), and runs once, at the first occurrence, when its time occurs twice; an interval job
 *   (`*\/15 * * * *`, `0 1,2 * * *`) skips times in a gap and runs on both occurrences of a repeated hour.
 */
import { Cron } from 'croner';
import { z } from 'zod';
import { text } from '../fields.js';
import { type ScheduleJson } from '../schema.js';

/** An IANA zone name as the time zone database spells it (no offsets such as `+01:00`, no abbreviations). */
const IANA_NAME = /^(?:[A-Za-z][A-Za-z0-9_+-]*)(?:\/[A-Za-z0-9_+-]+)*$/;
const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;
const CRON_NICKNAMES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

/** The zone's canonical name, or undefined when the time zone database does not know it. */
export function canonicalTimeZone(name: string): string | undefined {
  if (!IANA_NAME.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

const timezone = z
  .string({ error: 'an IANA time zone such as Europe/Berlin is required: no default time zone is assumed' })
  .max(100)
  .refine((name) => canonicalTimeZone(name) !== undefined, { error: 'not an IANA time zone name (such as Europe/Berlin or America/New_York)' })
  .describe('IANA time zone the schedule runs in, such as Europe/Berlin; required, no default is assumed.');

/** Refuses a string with what `problem` says is wrong with it. */
const checkedBy = (problem: (value: string) => string | undefined) => (value: string, issue: z.RefinementCtx) => {
  const message = problem(value);
  if (message) issue.addIssue({ code: 'custom', message });
};

const at = text()
  .max(40)
  .superRefine(checkedBy(localDateTimeProblem))
  .describe('Local wall-clock date-time in `timezone`, YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS, without an offset.');

const cron = text()
  .max(200)
  .superRefine(checkedBy(cronProblem))
  .describe('Five-field cron expression (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly.');

/**
 * A schedule as a client sends it: exactly one of `at` and `cron`, and always `timezone`. One object (rather
 * than a union of two) so that a refusal names the argument at fault (`schedule.timezone`, `schedule.at`).
 */
export const scheduleInput = z
  .object({ at: at.optional(), cron: cron.optional(), timezone })
  .strict()
  .superRefine((value, issue) => {
    if ((value.at === undefined) === (value.cron === undefined)) {
      issue.addIssue({ code: 'custom', message: 'give exactly one of at (one run) or cron (recurring runs)', path: [] });
      return;
    }
    // Only a well-formed time in a known zone can be looked up (zod checks the object even when a field failed).
    const comparable = value.at !== undefined && !localDateTimeProblem(value.at) && canonicalTimeZone(String(value.timezone));
    const skipped = comparable ? skippedLocalTimeProblem(value.at!, value.timezone) : undefined;
    if (skipped) issue.addIssue({ code: 'custom', message: skipped, path: ['at'] });
  })
  .describe('Run once at a local time ({at, timezone}) or repeatedly ({cron, timezone}); the IANA timezone is required.');

/** A stored, valid schedule (its `timezone` canonical). */
export type Schedule = ScheduleJson;

/** The record's `schedule` (DESIGN 4.3 task shape). */
export const scheduleRecord = z.union([
  z.object({ at: z.string(), timezone: z.string() }),
  z.object({ cron: z.string(), timezone: z.string() }),
]);

/** The schedule to store, from parsed input. */
export function toSchedule(input: z.output<typeof scheduleInput>): Schedule {
  const zone = canonicalTimeZone(input.timezone)!;
  return input.at !== undefined ? { at: withSeconds(input.at), timezone: zone } : { cron: input.cron!.trim(), timezone: zone };
}

/**
 * The first run strictly after `after`, or null when none is left (a one-shot time already passed, a cron
 * that can never match such as 30 February).
 */
export function nextRunAfter(schedule: Schedule, after: Date): Date | null {
  if ('at' in schedule) {
    const instant = localToInstant(schedule.at, schedule.timezone);
    return instant.getTime() > after.getTime() ? instant : null;
  }
  return new Cron(schedule.cron, { timezone: schedule.timezone, paused: true }).nextRun(after);
}

/** The next `count` runs strictly after `after` (fewer when the schedule has fewer left), computed in its zone. */
export function upcomingRuns(schedule: Schedule, after: Date, count: number): Date[] {
  if ('at' in schedule) {
    const next = nextRunAfter(schedule, after);
    return next ? [next] : [];
  }
  return new Cron(schedule.cron, { timezone: schedule.timezone, paused: true }).nextRuns(count, after);
}

/**
 * The instant of a local wall-clock time in `zone`: croner converts it (the first occurrence of a repeated
 * time). Precondition: the time exists in the zone (checked by the input schema).
 */
export function localToInstant(local: string, zone: string): Date {
  const run = new Cron(withSeconds(local), { timezone: zone, paused: true }).nextRun(new Date(0));
  if (!run) throw new Error(`no instant for ${local} in ${zone}`);
  return run;
}

/** The wall-clock time of `instant` in `zone`, as `YYYY-MM-DDTHH:MM:SS`. */
export function instantToLocal(instant: Date, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

function withSeconds(local: string): string {
  return local.length === 16 ? `${local}:00` : local;
}

/** Why `value` is not a local date-time; undefined when it is one. The zone is checked by the caller. */
function localDateTimeProblem(value: string): string | undefined {
  const match = LOCAL_DATE_TIME.exec(value);
  if (!match) {
    return /T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/i.test(value)
      ? 'give the local time in schedule.timezone without an offset or Z, such as 2026-05-04T09:00'
      : 'expected a local date-time YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS, such as 2026-05-04T09:00';
  }
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0));
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const real =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  return real ? undefined : 'not a real date and time';
}

/**
 * Refuses a local time the zone skips (a spring-forward gap): converted and shown back in the zone, it is
 * not the time that was asked for. Run after the zone and the date-time are known to be valid.
 */
export function skippedLocalTimeProblem(local: string, zone: string): string | undefined {
  const asked = withSeconds(local);
  const shown = instantToLocal(localToInstant(asked, zone), zone);
  return shown === asked ? undefined : `${local} does not exist in ${zone} (the clocks skip it for daylight saving time)`;
}

function cronProblem(value: string): string | undefined {
  const expression = value.trim();
  if (!expression.startsWith('@') && expression.split(/\s+/).length !== 5) {
    return 'expected five fields (minute hour day-of-month month day-of-week), such as "0 9 * * 1-5"';
  }
  if (expression.startsWith('@') && !CRON_NICKNAMES.includes(expression.toLowerCase())) {
    return `unknown nickname; use one of ${CRON_NICKNAMES.join(', ')}`;
  }
  try {
    const parsed = new Cron(expression, { timezone: 'UTC', paused: true });
    return parsed.nextRun() === null ? 'this expression never matches a date' : undefined;
  } catch (error) {
    return `not a valid cron expression: ${(error as Error).message.replace(/^CronPattern: /, '')}`;
  }
}
