import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';

describe.each(engines)('GET /metrics on %s', (engine) => {
  let content: TestContent;
  let org: TestOrg;
  let plain: TestContent;
  beforeAll(async () => {
    content = await startContent(engine, { config: { metrics: true } });
    org = await startOrg(engine, { config: { metrics: true } });
    plain = await startContent(engine);
  });
  afterAll(async () => {
    await Promise.all([content?.close(), org?.close(), plain?.close()]);
  });

  it('counts requests by route pattern and status, with their latency, in the Prometheus text format', async () => {
    expect((await fetch(`${content.url}/blog/no-such-post`)).status).toBe(404);
    const response = await fetch(`${content.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await response.text();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/blog\/:slug",status="404",service="content"\} 1$/m);
    expect(text).toMatch(/^http_request_duration_seconds_count\{service="content",method="GET",route="\/blog\/:slug"\} 1$/m);
    expect(text).toMatch(/^jobs_queued\{state="due",service="content"\} \d+$/m);
    expect(text).toMatch(/^database_connections\{state="total",service="content"\} [1-9]\d*$/m);
    expect(text).toMatch(/^process_resident_memory_bytes\{service="content"\} \d+/m);
  });

  it('counts a public read answered from the cache, before routing, under its route pattern like any other', async () => {
    const changelog = `${content.url}/changelog?limit=2`;
    const first = await fetch(changelog);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect((await fetch(changelog)).status).toBe(200);
    expect((await fetch(changelog, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const text = await (await fetch(`${content.url}/metrics`)).text();
    // The miss, the hit and the revalidation: three requests to the route, whichever way each was answered.
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/changelog",status="200",service="content"\} 2$/m);
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/changelog",status="304",service="content"\} 1$/m);
    expect(text).toMatch(/^http_request_duration_seconds_count\{service="content",method="GET",route="\/changelog"\} 3$/m);
  });

  it('serves them on the org service too, under its own name', async () => {
    const text = await (await fetch(`${org.url}/metrics`)).text();
    expect(text).toMatch(/^jobs_queued\{state="later",service="org"\} \d+$/m);
  });

  it('is off unless METRICS_ENABLED is set', async () => {
    expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
  });
});
