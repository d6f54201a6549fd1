/**
 * Answers before routing (platform/early-answers.ts), over real HTTP: an answer that declines leaves the request to
 * Fastify, one that answers is observed as a routed request would be, and one that throws before writing anything
 * leaves the request to Fastify instead of stopping the process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerBeforeRouting, onAnsweredEarly, type AnsweredEarly } from '../../src/platform/early-answers.js';
import { createHttpServer, type HttpServer } from '../../src/platform/http.js';

describe('answers before routing', () => {
  let app: HttpServer;
  let url: string;
  const observed: AnsweredEarly[] = [];
  let routed = 0;

  beforeAll(async () => {
    app = createHttpServer({ service: 'test', logLevel: 'silent' });
    answerBeforeRouting(app, (request, response) => {
      if (request.url === '/early') {
        response.writeHead(203, { 'content-type': 'text/plain' }).end('early');
        return '/early';
      }
      if (request.url === '/broken') throw new Error('an answer that fails before writing');
      return undefined;
    });
    onAnsweredEarly(app, (answered) => observed.push(answered));
    app.addHook('onRequest', async () => {
      routed += 1;
    });
    app.get('/early', async () => 'routed');
    app.get('/broken', async () => 'routed');
    app.get('/other', async () => 'routed');
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app.close());

  it('answers what it can without routing, and tells its observers', async () => {
    const response = await fetch(`${url}/early`);
    expect([response.status, await response.text()]).toEqual([203, 'early']);
    expect(routed).toBe(0);
    expect(observed).toEqual([{ method: 'GET', url: '/early', route: '/early', status: 203, milliseconds: expect.any(Number) }]);
  });

  it('leaves what it declines to Fastify', async () => {
    const response = await fetch(`${url}/other`);
    expect([response.status, await response.text()]).toEqual([200, 'routed']);
    expect(routed).toBe(1);
  });

  it('leaves a request to Fastify when an answer throws before writing, and the server keeps serving', async () => {
    const response = await fetch(`${url}/broken`);
    expect([response.status, await response.text()]).toEqual([200, 'routed']);
    expect(routed).toBe(2);
    expect((await fetch(`${url}/early`)).status).toBe(203);
  });

  it('is reached by app.inject only through Fastify', async () => {
    const response = await app.inject({ method: 'GET', url: '/early' });
    expect([response.statusCode, response.body]).toEqual([200, 'routed']);
  });
});
