/**
 * One version rule (spec 2.7: `v<major>.<minor>.<patch>`; issue 17): the changelog's `version` and the
 * roadmap's `changelog_version` accept and refuse the same strings, because both use `versionSchema`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

const WELL_FORMED = ['v0.0.0', 'v1.2.3', 'v10.20.30', 'v123456789.0.1'];
const MALFORMED = ['v01.2.3', 'v1.02.3', 'v1.2.03', '1.2.3', 'v1.2', 'v1.2.3.4', 'V1.2.3', 'v1.2.3-beta', 'v1234567890.0.0', ' v1.2.3'];

describe.each(engines)('the changelog version rule on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  async function shipWith(version: string) {
    const item = await content.request('POST', '/roadmap', { auth: true, json: { title: `Ships in ${version}`, ...actor } });
    expect(item.status).toBe(201);
    return content.request('POST', `/roadmap/${item.body.slug}/ship`, { auth: true, json: { changelog_version: version, ...actor } });
  }

  it.each(WELL_FORMED)('accepts %s as a changelog version and as the version a roadmap item shipped in', async (version) => {
    expect((await content.request('POST', '/changelog', { auth: true, json: { version, ...actor } })).status).toBe(201);
    expect((await shipWith(version)).status).toBe(200);
  });

  it.each(MALFORMED)('refuses %j as a changelog version and as the version a roadmap item shipped in', async (version) => {
    const entry = await content.request('POST', '/changelog', { auth: true, json: { version, ...actor } });
    expect(entry.status).toBe(400);
    expect(entry.body.error.code).toBe('invalid_request');
    const shipped = await shipWith(version);
    expect(shipped.status).toBe(400);
    expect(shipped.body.error.code).toBe('invalid_request');
  });
});
