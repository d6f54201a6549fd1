/**
 * Task schedules (src/org/tasks/schedules.ts): the next run of a schedule in its IANA zone, across the 2027
 * daylight-saving changes of Europe/Berlin (28 March 02:00 → 03:00, 31 October 03:00 → 02:00) and
 * America/New_York (14 March 02:00 → 03:00, 7 November 02:00 → 01:00), and which schedules are refused.
 */
import { describe, expect, it } from 'vitest';
import { nextRunAfter, scheduleInput, toSchedule, type Schedule } from '../../src/org/tasks/schedules.js';

const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';

const cron = (expression: string, timezone: string): Schedule => ({ cron: expression, timezone });
const at = (local: string, timezone: string): Schedule => ({ at: local, timezone });

describe('the next run, in the schedule’s zone', () => {
  it.each([
    // A daily job keeps its local time on both sides of a change.
    ['09:00 daily, Berlin, into summer time', cron('0 9 * * *', BERLIN), '2027-03-27T08:00:00Z', '2027-03-28T07:00:00.000Z'],
    ['09:00 daily, Berlin, the day after', cron('0 9 * * *', BERLIN), '2027-03-28T07:00:00Z', '2027-03-29T07:00:00.000Z'],
    ['09:00 daily, Berlin, back to winter time', cron('0 9 * * *', BERLIN), '2027-10-30T07:00:00Z', '2027-10-31T08:00:00.000Z'],
    ['09:00 daily, New York, into summer time', cron('0 9 * * *', NEW_YORK), '2027-03-13T14:00:00Z', '2027-03-14T13:00:00.000Z'],
    ['09:00 daily, New York, back to winter time', cron('0 9 * * *', NEW_YORK), '2027-11-06T13:00:00Z', '2027-11-07T14:00:00.000Z'],
    ['09:00 weekdays, New York, Friday to Monday over the change', cron('0 9 * * 1-5', NEW_YORK), '2027-11-05T13:00:00Z', '2027-11-08T14:00:00.000Z'],
    // 02:30 does not exist on a spring-forward day: a fixed-time job runs at the first time after the gap, 03:00.
    ['02:30 daily, Berlin, on the day 02:30 is skipped', cron('30 2 * * *', BERLIN), '2027-03-27T12:00:00Z', '2027-03-28T01:00:00.000Z'],
    ['02:30 daily, Berlin, the day after the gap', cron('30 2 * * *', BERLIN), '2027-03-28T01:00:00Z', '2027-03-29T00:30:00.000Z'],
    ['02:30 daily, New York, on the day 02:30 is skipped', cron('30 2 * * *', NEW_YORK), '2027-03-13T12:00:00Z', '2027-03-14T07:00:00.000Z'],
    // A time that occurs twice on an autumn day: a fixed-time job runs once, at the first occurrence.
    ['02:30 daily, Berlin, first of the two 02:30s', cron('30 2 * * *', BERLIN), '2027-10-30T12:00:00Z', '2027-10-31T00:30:00.000Z'],
    ['02:30 daily, Berlin, not again at the second 02:30', cron('30 2 * * *', BERLIN), '2027-10-31T00:30:00Z', '2027-11-01T01:30:00.000Z'],
    ['01:30 daily, New York, first of the two 01:30s', cron('30 1 * * *', NEW_YORK), '2027-11-06T12:00:00Z', '2027-11-07T05:30:00.000Z'],
    ['01:30 daily, New York, not again at the second 01:30', cron('30 1 * * *', NEW_YORK), '2027-11-07T05:30:00Z', '2027-11-08T06:30:00.000Z'],
    // Interval jobs skip times in the gap and run in both passes of a repeated hour.
    ['every 30 minutes, Berlin, over the gap', cron('*/30 * * * *', BERLIN), '2027-03-28T00:45:00Z', '2027-03-28T01:00:00.000Z'],
    ['hourly at :30, Berlin, first pass of the repeated hour', cron('30 * * * *', BERLIN), '2027-10-31T00:00:00Z', '2027-10-31T00:30:00.000Z'],
    ['hourly at :30, Berlin, second pass of the repeated hour', cron('30 * * * *', BERLIN), '2027-10-31T00:30:00Z', '2027-10-31T01:30:00.000Z'],
    ['@daily, New York, midnight local', cron('@daily', NEW_YORK), '2027-03-13T12:00:00Z', '2027-03-14T05:00:00.000Z'],
    // One-shot times are local wall-clock times; a repeated one means its first occurrence.
    ['once at 09:00 local, Berlin summer time', at('2027-03-28T09:00:00', BERLIN), '2027-01-01T00:00:00Z', '2027-03-28T07:00:00.000Z'],
    ['once at the repeated 02:30, Berlin', at('2027-10-31T02:30:00', BERLIN), '2027-01-01T00:00:00Z', '2027-10-31T00:30:00.000Z'],
    ['once at the repeated 01:30, New York', at('2027-11-07T01:30:00', NEW_YORK), '2027-01-01T00:00:00Z', '2027-11-07T05:30:00.000Z'],
    ['once, already passed', at('2027-03-28T09:00:00', BERLIN), '2027-03-28T07:00:00Z', null],
    ['a date that never comes', cron('0 0 30 2 *', 'UTC'), '2027-01-01T00:00:00Z', null],
  ])('%s', (_name, schedule, after, expected) => {
    expect(nextRunAfter(schedule, new Date(after))?.toISOString() ?? null).toBe(expected);
  });
});

describe('schedule input', () => {
  it.each([
    [{ at: '2027-03-28T09:00', timezone: BERLIN }, { at: '2027-03-28T09:00:00', timezone: BERLIN }],
    [{ at: '2027-03-28T09:00:15', timezone: 'europe/berlin' }, { at: '2027-03-28T09:00:15', timezone: BERLIN }],
    [{ cron: ' 0 9 * * 1-5 ', timezone: NEW_YORK }, { cron: '0 9 * * 1-5', timezone: NEW_YORK }],
    [{ cron: '@weekly', timezone: 'UTC' }, { cron: '@weekly', timezone: 'UTC' }],
  ])('accepts %j as %j', (input, stored) => {
    expect(toSchedule(scheduleInput.parse(input))).toEqual(stored);
  });

  it.each([
    ['no timezone', { at: '2027-03-28T09:00' }, 'timezone', 'an IANA time zone such as Europe/Berlin is required'],
    ['an unknown zone', { at: '2027-03-28T09:00', timezone: 'Mars/Olympus' }, 'timezone', 'not an IANA time zone'],
    ['an offset for a zone', { at: '2027-03-28T09:00', timezone: '+01:00' }, 'timezone', 'not an IANA time zone'],
    ['an empty zone', { cron: '0 9 * * *', timezone: '' }, 'timezone', 'not an IANA time zone'],
    ['both at and cron', { at: '2027-03-28T09:00', cron: '0 9 * * *', timezone: BERLIN }, '', 'exactly one of at'],
    ['neither at nor cron', { timezone: BERLIN }, '', 'exactly one of at'],
    ['an unknown key', { at: '2027-03-28T09:00', timezone: BERLIN, every: 'day' }, '', 'every'],
    ['an at in UTC', { at: '2027-03-28T09:00:00Z', timezone: BERLIN }, 'at', 'without an offset'],
    ['an at with an offset', { at: '2027-03-28T09:00+02:00', timezone: BERLIN }, 'at', 'without an offset'],
    ['an at without a time', { at: '2027-03-28', timezone: BERLIN }, 'at', 'expected a local date-time'],
    ['an at that is no date', { at: '2027-02-30T09:00', timezone: BERLIN }, 'at', 'not a real date'],
    ['an at the clocks skip in Berlin', { at: '2027-03-28T02:30', timezone: BERLIN }, 'at', 'does not exist in Europe/Berlin'],
    ['an at the clocks skip in New York', { at: '2027-03-14T02:30', timezone: NEW_YORK }, 'at', 'does not exist in America/New_York'],
    ['a cron with seconds', { cron: '0 0 9 * * *', timezone: BERLIN }, 'cron', 'expected five fields'],
    ['a cron with a bad minute', { cron: '61 9 * * *', timezone: BERLIN }, 'cron', 'not a valid cron expression'],
    ['a cron that never matches', { cron: '0 0 30 2 *', timezone: BERLIN }, 'cron', 'never matches'],
    ['an unknown nickname', { cron: '@fortnightly', timezone: BERLIN }, 'cron', 'unknown nickname'],
  ])('refuses %s, naming schedule.%s', (_name, input, field, message) => {
    const parsed = scheduleInput.safeParse(input);
    expect(parsed.success).toBe(false);
    const issue = parsed.error!.issues[0];
    expect(issue.path.join('.')).toBe(field);
    expect(issue.message + (issue.code === 'unrecognized_keys' ? issue.keys.join(',') : '')).toContain(message);
  });
});
