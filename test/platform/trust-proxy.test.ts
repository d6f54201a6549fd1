import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../../src/platform/http.js';

describe('TRUST_PROXY', () => {
  let app: HttpServer | undefined;
  afterEach(() => app?.close());

  async function clientAddressSeen(trustProxy: string | undefined): Promise<string> {
    app = createHttpServer({ service: 'test', logLevel: 'silent', trustProxy });
    app.get('/ip', async (request) => ({ ip: request.ip }));
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const response = await fetch(`${url}/ip`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    const { ip } = (await response.json()) as { ip: string };
    await app.close();
    app = undefined;
    return ip;
  }

  it('ignores X-Forwarded-For when unset, so a client cannot pick its own address', async () => {
    expect(await clientAddressSeen(undefined)).toBe('127.0.0.1');
  });

  it('believes X-Forwarded-For from a listed proxy', async () => {
    expect(await clientAddressSeen('127.0.0.1')).toBe('203.0.113.9');
  });

  it('does not believe it from a proxy that is not listed', async () => {
    expect(await clientAddressSeen('10.0.0.0/8')).toBe('127.0.0.1');
  });
});
