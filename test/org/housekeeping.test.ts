/**
 * The org housekeeping job (src/org/housekeeping.ts) on a real service: rows made by the real OAuth flow,
 * sign-in and MCP endpoint are aged in the database, the durable job runs, and what can never be used again
 * is gone while everything live still works.
 */
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/auth/ids.js';
import { ensureHousekeepingScheduled, HOUSEKEEPING_EVERY_SECONDS, HOUSEKEEPING_JOB } from '../../src/org/housekeeping.js';
import { countAttempt } from '../../src/platform/rate-limit.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, initializeMessage, openMcpSession, postMcp, registerClient, startAuthorization } from '../helpers/oauth-flow.js';
import { Browserless } from '../helpers/web-client.js';

const DAY = "interval '1 day'";

describe.each(engines)('org housekeeping on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine);
  });
  afterAll(() => org.close());

  const rows = <T extends Record<string, unknown>>(query: SQL) => org.service.database.rows<T>(query);
  const exec = (query: SQL) => org.service.database.db.execute(query);
  const count = async (query: SQL) => Number((await rows<{ n: number }>(query))[0].n);
  const grantOf = async (token: string) =>
    (await rows<{ grant_id: string }>(sql`SELECT grant_id FROM oauth_tokens WHERE hash = ${hashToken(token)}`))[0].grant_id;

  /** The pending run: it holds the key (a run under way has handed it on, and may have done its work already). */
  async function housekeepingJob() {
    const [job] = await rows<{ id: number; run_at: string; failed_at: string | null; key: string }>(
      sql`SELECT id, run_at::text, failed_at::text, key FROM jobs WHERE kind = ${HOUSEKEEPING_JOB} AND key = ${HOUSEKEEPING_JOB}`,
    );
    return job;
  }

  /**
   * Makes the pending run due and waits until it is done: a run hands its key to the next run first and deletes
   * its own row once its work is over, and the service's worker may be the one running it.
   */
  async function runHousekeepingJob(): Promise<void> {
    const before = await housekeepingJob();
    await exec(sql`UPDATE jobs SET run_at = now() WHERE id = ${before.id}`);
    for (let tries = 0; tries < 100; tries++) {
      await org.service.jobs.runDue();
      const [still] = await rows(sql`SELECT 1 FROM jobs WHERE id = ${before.id}`);
      if (!still) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the housekeeping job did not run');
  }

  it('keeps exactly one pending run, ensured at start without moving its schedule', async () => {
    await runHousekeepingJob();
    const pending = await rows<{ key: string; in_seconds: number }>(
      sql`SELECT key, extract(epoch FROM run_at - now())::int AS in_seconds FROM jobs WHERE kind = ${HOUSEKEEPING_JOB}`,
    );
    expect(pending).toHaveLength(1);
    expect(pending[0].key).toBe(HOUSEKEEPING_JOB);
    expect(pending[0].in_seconds).toBeGreaterThan(HOUSEKEEPING_EVERY_SECONDS - 60);
    expect(pending[0].in_seconds).toBeLessThanOrEqual(HOUSEKEEPING_EVERY_SECONDS);

    // Another process starting on the same database ensures the schedule and leaves it as it is.
    const scheduled = await housekeepingJob();
    await ensureHousekeepingScheduled(org.service.database.db);
    expect(await housekeepingJob()).toEqual(scheduled);
  });

  it('starts a run again at the next process start when one failed for good', async () => {
    const { id } = await housekeepingJob();
    await exec(sql`UPDATE jobs SET failed_at = now(), attempts = max_attempts, run_at = now() + interval '1 hour' WHERE id = ${id}`);
    await ensureHousekeepingScheduled(org.service.database.db);
    const revived = await rows<{ failed_at: string | null; due: boolean }>(sql`SELECT failed_at, run_at <= now() AS due FROM jobs WHERE id = ${id}`);
    expect(revived).toEqual([{ failed_at: null, due: true }]);
    await runHousekeepingJob();
  });

  it('deletes spent OAuth rows, expired web sessions, passed rate-limit windows and stale MCP sessions, and keeps what is live', async () => {
    // Live: a connection in use, its MCP session, a pending consent, a signed-in browser, a counting window.
    const live = await connectClient(org);
    const liveSession = await openMcpSession(org, live.accessToken);
    const pendingClient = await registerClient(org);
    const pending = await startAuthorization(org, pendingClient, ['task:read']);
    const pendingRequest = new URLSearchParams(pending.consentPath.split('?')[1]).get('request')!;
    const browser = new Browserless(org.url);
    expect((await browser.signIn(OWNER.email, OWNER.password)).status).toBe(303);
    await countAttempt(org.service.database.db, 'test:current', { limit: 5, windowSeconds: 3600 });

    // Revoked two days ago (RFC 7009 on the refresh token revokes the grant): the grant and its rows go.
    const revoked = await connectClient(org);
    const revokedGrant = await grantOf(revoked.accessToken);
    expect((await org.request('POST', '/oauth/revoke', { form: { token: revoked.refreshToken, client_id: revoked.clientId } })).status).toBe(200);
    await exec(sql`UPDATE oauth_grants SET revoked_at = now() - ${sql.raw(DAY)} * 2, created_at = now() - ${sql.raw(DAY)} * 3 WHERE id = ${revokedGrant}`);
    await exec(sql`UPDATE oauth_tokens SET revoked_at = now() - ${sql.raw(DAY)} * 2 WHERE grant_id = ${revokedGrant}`);

    // Abandoned: every token expired two days ago, the code long ago; nothing is left, so the grant goes too.
    const abandoned = await connectClient(org);
    const abandonedGrant = await grantOf(abandoned.accessToken);
    await exec(sql`UPDATE oauth_tokens SET expires_at = now() - ${sql.raw(DAY)} * 2 WHERE grant_id = ${abandonedGrant}`);
    await exec(sql`UPDATE oauth_codes SET expires_at = now() - ${sql.raw(DAY)} * 40 WHERE grant_id = ${abandonedGrant}`);
    await exec(sql`UPDATE oauth_grants SET created_at = now() - ${sql.raw(DAY)} * 40 WHERE id = ${abandonedGrant}`);

    // Within the grace period: an access token expired an hour ago stays, so does the grant with its refresh token.
    const recent = await connectClient(org);
    const recentGrant = await grantOf(recent.accessToken);
    await exec(sql`UPDATE oauth_tokens SET expires_at = now() - interval '1 hour' WHERE hash = ${hashToken(recent.accessToken)}`);

    // An answered request (the live connection's) and an expired one go; the pending one stays.
    const expiredRequest = new URLSearchParams((await startAuthorization(org, pendingClient, [])).consentPath.split('?')[1]).get('request')!;
    await exec(sql`UPDATE oauth_authorization_requests SET expires_at = now() - interval '1 second' WHERE id = ${expiredRequest}`);
    const answered = await count(sql`SELECT count(*) AS n FROM oauth_authorization_requests WHERE answered_at IS NOT NULL`);
    expect(answered).toBeGreaterThan(0);

    // An expired browser session; a passed window.
    const other = new Browserless(org.url);
    await other.signIn(OWNER.email, OWNER.password);
    const sessionsBefore = await count(sql`SELECT count(*) AS n FROM web_sessions`);
    await exec(sql`UPDATE web_sessions SET expires_at = now() - interval '1 second' WHERE created_at = (SELECT max(created_at) FROM web_sessions)`);
    await countAttempt(org.service.database.db, 'test:passed', { limit: 5, windowSeconds: 3600 });
    await exec(sql`UPDATE rate_limits SET resets_at = now() - interval '1 second' WHERE key = 'test:passed'`);

    // MCP sessions: one idle for 25 hours, one ended 25 hours ago; a content session row is not ours to delete.
    const idle = await openMcpSession(org, live.accessToken);
    const ended = await openMcpSession(org, live.accessToken);
    await exec(sql`UPDATE mcp_sessions SET last_seen_at = now() - interval '25 hours' WHERE id = ${idle['mcp-session-id']}`);
    await exec(
      sql`UPDATE mcp_sessions SET ended_at = now() - interval '25 hours', last_seen_at = now() - interval '1 hour' WHERE id = ${ended['mcp-session-id']}`,
    );
    await exec(
      sql`INSERT INTO mcp_sessions (id, server, protocol_version, client_name, last_seen_at) VALUES ('content-idle', 'content', '2025-03-26', 'x', now() - interval '2 days')`,
    );

    // Idempotency keys: one used 25 hours ago goes, one used now stays (DESIGN 4.3: kept 24 hours).
    const [owner] = await rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${OWNER.email}`);
    await exec(
      sql`INSERT INTO idempotency_keys (person_id, client_id, key, arguments_hash, created_at) VALUES
        (${owner.id}, ${live.clientId}, 'old-key', 'x', now() - interval '25 hours'), (${owner.id}, ${live.clientId}, 'new-key', 'x', now())`,
    );

    await runHousekeepingJob();

    // Gone.
    expect(await count(sql`SELECT count(*) AS n FROM idempotency_keys WHERE key = 'old-key'`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM oauth_grants WHERE id IN (${revokedGrant}, ${abandonedGrant})`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM oauth_tokens WHERE grant_id IN (${revokedGrant}, ${abandonedGrant})`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM oauth_codes WHERE grant_id IN (${revokedGrant}, ${abandonedGrant})`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM oauth_authorization_requests WHERE answered_at IS NOT NULL OR id = ${expiredRequest}`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM web_sessions`)).toBe(sessionsBefore - 1);
    expect(await count(sql`SELECT count(*) AS n FROM rate_limits WHERE key = 'test:passed'`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM mcp_sessions WHERE id IN (${idle['mcp-session-id']}, ${ended['mcp-session-id']})`)).toBe(0);
    expect((await postMcp(org, { jsonrpc: '2.0', id: 2, method: 'ping' }, idle)).status).toBe(404);

    // Kept.
    expect(await count(sql`SELECT count(*) AS n FROM idempotency_keys WHERE key = 'new-key'`)).toBe(1);
    expect(await count(sql`SELECT count(*) AS n FROM oauth_tokens WHERE grant_id = ${recentGrant}`)).toBe(2);
    expect(await count(sql`SELECT count(*) AS n FROM oauth_authorization_requests WHERE id = ${pendingRequest}`)).toBe(1);
    expect(await count(sql`SELECT count(*) AS n FROM rate_limits WHERE key = 'test:current'`)).toBe(1);
    expect(await count(sql`SELECT count(*) AS n FROM mcp_sessions WHERE id = 'content-idle'`)).toBe(1);
    expect((await browser.get('/connections')).status).toBe(200);
    expect((await postMcp(org, { jsonrpc: '2.0', id: 3, method: 'ping' }, liveSession)).status).toBe(200);
    const refreshed = await org.request('POST', '/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: live.refreshToken, client_id: live.clientId, resource: `${org.config.publicUrl}/mcp` },
    });
    expect(refreshed.status).toBe(200);
    const recentRefresh = await org.request('POST', '/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: recent.refreshToken, client_id: recent.clientId, resource: `${org.config.publicUrl}/mcp` },
    });
    expect(recentRefresh.status).toBe(200);
    expect((await postMcp(org, initializeMessage, { authorization: `Bearer ${refreshed.body.access_token}` })).status).toBe(200);
  });
});
