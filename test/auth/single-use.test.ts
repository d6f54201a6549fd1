import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAccessToken } from '../../src/auth/tokens.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { authorizeAndApprove, connectedClient, postForm, registerTestClient } from '../helpers/auth-flow.js';

const PARALLEL = 12;

describe.each(engines)('single use under concurrency on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    // The strict rule, without the reuse interval (refresh-reuse.test.ts covers the interval).
    org = await startOrg(engine, { config: { refreshReuseSeconds: 0 } });
  });
  afterAll(() => org.close());

  it(`of ${PARALLEL} parallel redemptions of one code exactly one wins, and the replays revoke its tokens`, async () => {
    const tc = await registerTestClient(org);
    const approved = await authorizeAndApprove(org, { clientId: tc.clientId });
    const form = {
      grant_type: 'authorization_code',
      code: approved.code,
      redirect_uri: approved.redirectUri,
      client_id: tc.clientId,
      code_verifier: approved.codeVerifier,
      resource: tc.resource,
    };
    const responses = await Promise.all(Array.from({ length: PARALLEL }, () => postForm(org, '/oauth/token', form)));
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    expect(responses.filter((response) => response.status === 400 && response.body.error === 'invalid_grant')).toHaveLength(PARALLEL - 1);
    expect(await verifyAccessToken(org.service.ctx, winners[0].body.access_token, tc.resource)).toBeNull();
  });

  it(`of ${PARALLEL} parallel refreshes with one refresh token exactly one wins, and the reuse revokes the grant`, async () => {
    const { tc, tokens } = await connectedClient(org);
    const form = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: tc.clientId, resource: tc.resource };
    const responses = await Promise.all(Array.from({ length: PARALLEL }, () => postForm(org, '/oauth/token', form)));
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    expect(responses.filter((response) => response.status === 400 && response.body.error === 'invalid_grant')).toHaveLength(PARALLEL - 1);
    expect(await verifyAccessToken(org.service.ctx, winners[0].body.access_token, tc.resource)).toBeNull();
    const next = await postForm(org, '/oauth/token', { ...form, refresh_token: winners[0].body.refresh_token });
    expect(next.body.error).toBe('invalid_grant');
  });
});
