/**
 * POST /oauth/register is limited per client address (src/auth/registration-limit.ts): 20 clients an hour by
 * default, then 429 with Retry-After and an OAuth error body; the count lives in the database.
 */
import http from 'node:http';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRATIONS_PER_HOUR } from '../../src/auth/registration-limit.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';

const client = { client_name: 'Limited', redirect_uris: ['http://127.0.0.1/callback'] };

/** A registration sent from another loopback address (node:http can choose the local address; fetch cannot). */
function registerFrom(localAddress: string, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/oauth/register`, { method: 'POST', localAddress, headers: { 'content-type': 'application/json' } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end(JSON.stringify(client));
  });
}

describe.each(engines)('the registration limit on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine, { config: { registrationsPerHour: undefined } });
  });
  afterAll(() => org.close());

  const register = (json: unknown) => org.request('POST', '/oauth/register', { json });

  it('refuses malformed registrations without counting them', async () => {
    for (let i = 0; i < DEFAULT_REGISTRATIONS_PER_HOUR + 5; i++) {
      const refused = await register({ redirect_uris: ['http://127.0.0.1/callback#fragment'] });
      expect(refused.status).toBe(400);
    }
  });

  it(`registers ${DEFAULT_REGISTRATIONS_PER_HOUR} clients an hour from one address, then answers 429 too_many_requests with Retry-After`, async () => {
    for (let i = 0; i < DEFAULT_REGISTRATIONS_PER_HOUR; i++) expect((await register(client)).status).toBe(201);
    const refused = await register(client);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.body).toEqual({ error: 'too_many_requests', error_description: expect.stringContaining('try again in') });
  });

  it('counts another address on its own', async () => {
    expect(await registerFrom('127.0.0.2', org.url)).toBe(201);
    expect(await registerFrom('127.0.0.1', org.url)).toBe(429);
  });

  it('keeps the count in the database (shared by every process), refused attempts included', async () => {
    const [row] = await org.service.database.rows<{ count: number }>(sql`SELECT count FROM rate_limits WHERE key = 'register:127.0.0.1'`);
    expect(row.count).toBe(DEFAULT_REGISTRATIONS_PER_HOUR + 2);
  });
});
