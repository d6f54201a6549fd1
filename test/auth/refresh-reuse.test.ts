/**
 * The refresh reuse interval (DESIGN 4.7, OAUTH_REFRESH_REUSE_SECONDS): a client refreshing from two places
 * at once is not logged out, while a refresh token replayed after the interval still revokes its grant.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAccessToken } from '../../src/auth/tokens.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { connectedClient, oauthErrorCode, refresh } from '../helpers/auth-flow.js';

describe.each(engines)('refresh token reuse on %s', (engine) => {
  let org: TestOrg;
  let strict: TestOrg;
  beforeAll(async () => {
    [org, strict] = await Promise.all([startOrg(engine), startOrg(engine, { config: { refreshReuseSeconds: 0 } })]);
  });
  afterAll(() => Promise.all([org.close(), strict.close()]));

  const verify = (server: TestOrg, token: string) => verifyAccessToken(server.service.ctx, token, `${server.url}/mcp`);

  it('gives the just-rotated refresh token a fresh pair for the same grant within the interval', async () => {
    const { tc, tokens } = await connectedClient(org);
    const first = await refresh(tc, tokens.refresh_token!);
    const again = await refresh(tc, tokens.refresh_token!);
    expect(again.refresh_token).toMatch(/^atr_rt_/);
    expect(new Set([first.access_token, again.access_token, first.refresh_token, again.refresh_token]).size).toBe(4);
    const [one, two] = await Promise.all([verify(org, first.access_token), verify(org, again.access_token)]);
    expect(one).not.toBeNull();
    expect(two?.grantId).toBe(one?.grantId);
    // Both new refresh tokens carry on.
    expect(await verify(org, (await refresh(tc, first.refresh_token!)).access_token)).not.toBeNull();
    expect(await verify(org, (await refresh(tc, again.refresh_token!)).access_token)).not.toBeNull();
  });

  it('lets concurrent refreshes with one token all succeed, and revokes nothing', async () => {
    const { tc, tokens } = await connectedClient(org);
    const results = await Promise.all(Array.from({ length: 5 }, () => refresh(tc, tokens.refresh_token!)));
    const accessTokens = results.map((result) => result.access_token);
    expect(new Set(accessTokens).size).toBe(5);
    for (const token of accessTokens) expect(await verify(org, token)).not.toBeNull();
  });

  it('still revokes the grant when the rotated token comes back after the interval', async () => {
    const { tc, tokens } = await connectedClient(org);
    const first = await refresh(tc, tokens.refresh_token!);
    const rotatedGrant = sql`(SELECT grant_id FROM oauth_tokens WHERE used_at IS NOT NULL ORDER BY used_at DESC LIMIT 1)`;
    await org.service.ctx.db.execute(sql`UPDATE oauth_tokens SET used_at = now() - interval '31 seconds' WHERE grant_id = ${rotatedGrant} AND used_at IS NOT NULL`);
    await expect(refresh(tc, tokens.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
    expect(await verify(org, first.access_token)).toBeNull();
    await expect(refresh(tc, first.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
  });

  it('does not extend the interval by reusing within it', async () => {
    const { tc, tokens } = await connectedClient(org);
    await refresh(tc, tokens.refresh_token!);
    const usedAt = await org.service.ctx.database.rows<{ used_at: string }>(
      sql`SELECT used_at::text FROM oauth_tokens WHERE kind = 'refresh' AND used_at IS NOT NULL ORDER BY used_at DESC LIMIT 1`,
    );
    await refresh(tc, tokens.refresh_token!);
    const after = await org.service.ctx.database.rows<{ used_at: string }>(
      sql`SELECT used_at::text FROM oauth_tokens WHERE used_at = ${usedAt[0].used_at}::timestamptz`,
    );
    expect(after).toHaveLength(1);
  });

  it('with OAUTH_REFRESH_REUSE_SECONDS=0, any reuse revokes the grant', async () => {
    const { tc, tokens } = await connectedClient(strict);
    const first = await refresh(tc, tokens.refresh_token!);
    await expect(refresh(tc, tokens.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
    expect(await verify(strict, first.access_token)).toBeNull();
  });
});
