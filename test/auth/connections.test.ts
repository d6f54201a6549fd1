import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveAuthorizationRequest } from '../../src/auth/authorization.js';
import { disconnectClient, listConnections } from '../../src/auth/grants.js';
import { verifyAccessToken } from '../../src/auth/tokens.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { authorize, authorizeAndApprove, consentRequestId, oauthErrorCode, PERSON, redeemCode, refresh, registerTestClient } from '../helpers/auth-flow.js';

describe.each(engines)('a person’s connected clients on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine);
  });
  afterAll(() => org.close());

  it('lists each authorized client once, with the union of its scopes and when it was last used', async () => {
    const person = 'person_connections';
    const first = await registerTestClient(org, { client_name: 'First' });
    const second = await registerTestClient(org, { client_name: 'Second' });
    const approve = async (clientId: string, scope: string) => {
      const pending = await authorize(org, { clientId, scope });
      const callback = new URL(await approveAuthorizationRequest(org.service.ctx, consentRequestId(pending.location), person));
      return { ...pending, callback, code: callback.searchParams.get('code')! };
    };
    const tokens = await redeemCode(first, await approve(first.clientId, 'memory:read'));
    await redeemCode(first, await approve(first.clientId, 'task:read service:ask'));
    await approve(second.clientId, 'governance:admin');

    const connections = await listConnections(org.service.ctx, person);
    expect(connections).toEqual([
      {
        clientId: first.clientId,
        clientName: 'First',
        redirectHosts: [expect.any(String)],
        scopes: ['service:ask', 'memory:read', 'task:read'],
        connectedAt: expect.stringMatching(/Z$/),
        lastUsedAt: expect.stringMatching(/Z$/),
      },
      { clientId: second.clientId, clientName: 'Second', redirectHosts: [expect.any(String)], scopes: ['governance:admin'], connectedAt: expect.stringMatching(/Z$/) },
    ]);
    expect(await verifyAccessToken(org.service.ctx, tokens.access_token, first.resource)).not.toBeNull();
    expect(await listConnections(org.service.ctx, 'someone_else')).toEqual([]);
  });

  it('disconnecting revokes every token of that client for that person, and only those', async () => {
    const tc = await registerTestClient(org, { client_name: 'Disconnected' });
    const kept = await registerTestClient(org, { client_name: 'Kept' });
    const a = await redeemCode(tc, await authorizeAndApprove(org, { clientId: tc.clientId }));
    const b = await redeemCode(tc, await authorizeAndApprove(org, { clientId: tc.clientId }));
    const pendingCode = await authorizeAndApprove(org, { clientId: tc.clientId });
    const other = await redeemCode(kept, await authorizeAndApprove(org, { clientId: kept.clientId }));

    await disconnectClient(org.service.ctx, PERSON, tc.clientId);

    for (const tokens of [a, b]) {
      expect(await verifyAccessToken(org.service.ctx, tokens.access_token, tc.resource)).toBeNull();
      await expect(refresh(tc, tokens.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
    }
    await expect(redeemCode(tc, pendingCode)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
    expect(await verifyAccessToken(org.service.ctx, other.access_token, kept.resource)).not.toBeNull();
    const names = (await listConnections(org.service.ctx, PERSON)).map((connection) => connection.clientName);
    expect(names).toContain('Kept');
    expect(names).not.toContain('Disconnected');
  });

  it('drops a client from the list once all its tokens are revoked by the client', async () => {
    const person = 'person_revoking';
    const tc = await registerTestClient(org, { client_name: 'Self-revoking' });
    const pending = await authorize(org, { clientId: tc.clientId });
    const callback = new URL(await approveAuthorizationRequest(org.service.ctx, consentRequestId(pending.location), person));
    const tokens = await redeemCode(tc, { ...pending, callback, code: callback.searchParams.get('code')! });
    expect(await listConnections(org.service.ctx, person)).toHaveLength(1);
    const response = await org.request('POST', '/oauth/revoke', { form: { token: tokens.refresh_token!, client_id: tc.clientId } });
    expect(response.status).toBe(200);
    expect(await listConnections(org.service.ctx, person)).toEqual([]);
  });
});
