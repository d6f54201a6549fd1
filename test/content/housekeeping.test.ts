/**
 * The content housekeeping job (src/content/housekeeping.ts) on a real service: stale MCP sessions and old
 * failed jobs are deleted by the durable job, live ones are kept, and the next run is scheduled.
 */
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_HOUSEKEEPING_JOB } from '../../src/content/housekeeping.js';
import { CONTENT_MCP_SESSION_SCOPE } from '../../src/content/mcp/server.js';
import { createSession } from '../../src/platform/mcp/sessions.js';
import { startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

describe.each(engines)('content housekeeping on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  const rows = <T extends Record<string, unknown>>(query: SQL) => content.service.ctx.database.rows<T>(query);
  const exec = (query: SQL) => content.service.ctx.db.execute(query);
  const pendingRun = async () =>
    (await rows<{ id: number; in_seconds: number }>(
      sql`SELECT id, extract(epoch FROM run_at - now())::int AS in_seconds FROM jobs WHERE key = ${CONTENT_HOUSEKEEPING_JOB}`,
    ))[0];

  async function session(age: string, ended: boolean): Promise<string> {
    const { id } = await createSession(content.service.ctx.db, {
      server: CONTENT_MCP_SESSION_SCOPE,
      protocolVersion: '2025-03-26',
      clientName: `agent-${age}`,
      principal: null,
    });
    await exec(sql`UPDATE mcp_sessions SET last_seen_at = now() - ${age}::interval,
      ended_at = CASE WHEN ${ended} THEN now() - ${age}::interval END WHERE id = ${id}`);
    return id;
  }

  async function failedJob(age: string): Promise<number> {
    const [job] = await rows<{ id: number }>(sql`
      INSERT INTO jobs (kind, payload, failed_at, attempts) VALUES ('revalidate', '{}', now() - ${age}::interval, 5) RETURNING id`);
    return Number(job.id);
  }

  it('is scheduled at start, deletes stale sessions and old failed jobs, keeps live ones, and schedules the next run', async () => {
    const first = await pendingRun();
    expect(first).toBeDefined();

    const idle = await session('25 hours', false);
    const endedLongAgo = await session('25 hours', true);
    const active = await session('1 hour', false);
    const oldFailure = await failedJob('8 days');
    const recentFailure = await failedJob('1 day');

    // The run scheduled at start may be running right now (it is due at once): take the run pending after the
    // rows above exist, make it due, and wait until it is done — a run hands its key to the next run first and
    // deletes its own row once its work is over, and the service's worker may be the one running it.
    const due = await pendingRun();
    await exec(sql`UPDATE jobs SET run_at = now() WHERE id = ${due.id}`);
    const stillThere = async () => (await rows(sql`SELECT 1 FROM jobs WHERE id = ${due.id}`)).length > 0;
    for (let tries = 0; tries < 200 && (await stillThere()); tries++) {
      await content.service.ctx.jobs.runDue();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await stillThere()).toBe(false);

    const sessions = (await rows<{ id: string }>(sql`SELECT id FROM mcp_sessions`)).map((row) => row.id);
    expect(sessions).toContain(active);
    expect(sessions).not.toContain(idle);
    expect(sessions).not.toContain(endedLongAgo);
    const failed = (await rows<{ id: number }>(sql`SELECT id FROM jobs WHERE failed_at IS NOT NULL`)).map((row) => Number(row.id));
    expect(failed).toEqual([recentFailure]);
    expect(failed).not.toContain(oldFailure);

    const next = await pendingRun();
    expect(next.id).not.toBe(due.id);
    expect(next.in_seconds).toBeGreaterThan(9 * 60);
  });
});
