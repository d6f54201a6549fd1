/**
 * Sign-in throttling from the attacker's side: spraying one password over many accounts from one address,
 * guessing one account's password, and locking a person out from a shared address. Behind a trusted proxy
 * so each test can speak from addresses of its own (X-Forwarded-For).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_ADDRESS_LIMIT, SIGN_IN_BACKOFF } from '../../src/org/web/signin.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { Browserless } from '../helpers/web-client.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(engines)('sign-in throttling on %s', (engine) => {
  let org: TestOrg;
  const from = (address: string) => new Browserless(org.url, new Map(), { 'x-forwarded-for': address });
  beforeAll(async () => {
    org = await startOrg(engine, { config: { trustProxy: 'true' } });
  });
  afterAll(() => org.close());

  it('slows one password sprayed over many accounts from one address, whatever the emails', async () => {
    const attacker = from('203.0.113.10');
    for (let n = 1; n <= SIGN_IN_ADDRESS_LIMIT.limit; n++) {
      expect((await attacker.signIn(`victim-${n}@example.com`, 'Summer2026!')).status).toBe(200);
    }
    const refused = await attacker.signIn('victim-next@example.com', 'Summer2026!');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.text).toContain('Too many sign-in attempts');
    // The right password is no way round it from that address…
    const owner = await attacker.signIn(OWNER.email, OWNER.password);
    expect(owner.status).toBe(429);
    expect(owner.headers.getSetCookie().some((line) => line.startsWith('atrium_session='))).toBe(false);
    // …and another address is not affected.
    expect((await from('203.0.113.11').signIn(OWNER.email, OWNER.password)).status).toBe(303);
  });

  it('does not count successful sign-ins against a shared address', async () => {
    // A fresh browser each time: many people behind one office address.
    for (let n = 0; n < SIGN_IN_ADDRESS_LIMIT.limit + 2; n++) {
      expect((await from('203.0.113.20').signIn(OWNER.email, OWNER.password)).status).toBe(303);
    }
  });

  it('backs off guesses at one account instead of locking it, and the right password works after the wait', async () => {
    const guesser = from('203.0.113.30');
    for (let n = 1; n <= SIGN_IN_BACKOFF.free; n++) expect((await guesser.signIn(OWNER.email, `guess-${n}`)).status).toBe(200);
    // Even the right password waits its turn, but only that long.
    const refused = await guesser.signIn(OWNER.email, OWNER.password);
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBe(SIGN_IN_BACKOFF.baseSeconds);
    await pause(wait * 1000 + 100);
    expect((await guesser.signIn(OWNER.email, OWNER.password)).status).toBe(303);
  });

  it('lets only one of many parallel guesses through once the free tries are spent', async () => {
    const guesser = from('203.0.113.40');
    for (let n = 1; n <= SIGN_IN_BACKOFF.free; n++) expect((await guesser.signIn(OWNER.email, `guess-${n}`)).status).toBe(200);
    await pause(SIGN_IN_BACKOFF.baseSeconds * 1000 + 100);
    const statuses = await Promise.all(
      Array.from({ length: 8 }, async (_unused, index) => {
        const browser = from('203.0.113.40');
        const page = await browser.get('/signin');
        return (await browser.post('/signin', { email: OWNER.email, password: `parallel-${index}`, csrf: browser.hidden(page.text, 'csrf') })).status;
      }),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 429)).toHaveLength(7);
  });

  it('does not let guesses from one address delay the person at another', async () => {
    const guesser = from('203.0.113.50');
    for (let n = 0; n <= SIGN_IN_BACKOFF.free; n++) await guesser.signIn(OWNER.email, `guess-${n}`);
    expect((await guesser.signIn(OWNER.email, OWNER.password)).status).toBe(429);
    expect((await from('203.0.113.51').signIn(OWNER.email, OWNER.password)).status).toBe(303);
  });
});
