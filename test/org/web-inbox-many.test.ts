/**
 * An inbox with more decisions than a page holds: the newest 50, how many wait in all, and — behind all those newer
 * pending ones — the decisions already resolved, the most recently resolved first.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { Browserless } from '../helpers/web-client.js';

describe.each(engines)('a full inbox on %s', (engine) => {
  let org: TestOrg;
  let actor: OrgMcp;

  beforeAll(async () => {
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-inbox-many-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Busy Co, client_autonomy: 2 }
spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
capabilities:
  - { key: wire_money, name: Wire money, risk: high, connector: { kind: webhook, url: "http://127.0.0.1:9/wire" } }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    actor = await connectOrgMcp(org, { scopes: ['integrations:read', 'integrations:act'], clientName: 'Busy bot' });
    const spaceId = (await actor.callOk('service_context')).spaces[0].id;
    const [wire] = (await actor.callOk('list_capabilities')).capabilities;
    // Two asked first and resolved in the other order (the later request denied first), then 52 that wait.
    const early = [];
    for (const amount of [1001, 1002]) {
      const paused = await actor.callOk('execute_capability', { capability_id: wire.id, input: { amount }, space_id: spaceId, wait_seconds: 5 });
      expect(paused.status).toBe('paused');
      early.push(paused.decision_id as string);
    }
    const owner = new Browserless(org.url);
    await owner.signIn(OWNER.email, OWNER.password);
    for (const [decisionId, note] of [
      [early[1], 'not 1002'],
      [early[0], 'not 1001 either'],
    ]) {
      const csrf = owner.hidden((await owner.get('/inbox')).text, 'csrf');
      expect((await owner.post('/inbox/resolve', { csrf, decision_id: decisionId, outcome: 'deny', note })).status).toBe(303);
    }
    for (let index = 1; index <= 52; index += 1) {
      const paused = await actor.callOk('execute_capability', { capability_id: wire.id, input: { amount: index }, space_id: spaceId, wait_seconds: 5 });
      expect(paused.status).toBe('paused');
    }
  });
  afterAll(async () => {
    await actor?.close();
    await org?.close();
  });

  it('shows the 50 newest decisions and says that 52 wait', async () => {
    const owner = new Browserless(org.url);
    await owner.signIn(OWNER.email, OWNER.password);
    const page = await owner.get('/inbox');
    expect(page.status).toBe(200);
    expect(page.text).toContain('52 decisions wait for you; the 50 newest are below.');
    expect(page.text.match(/>Approve</g)).toHaveLength(50);
    expect(page.text).toContain('&quot;amount&quot;: 52');
    expect(page.text).not.toContain('&quot;amount&quot;: 2\n');
  });

  it('lists the resolved decisions behind them, the most recently resolved first', async () => {
    const owner = new Browserless(org.url);
    await owner.signIn(OWNER.email, OWNER.password);
    const page = await owner.get('/inbox');
    const resolved = page.text.slice(page.text.indexOf('>Recently resolved<'));
    expect(resolved).not.toContain('Nothing resolved yet.');
    const rows = [...resolved.matchAll(/<a href="\/inbox\/decisions\/([^"]+)">Wire money<\/a>/g)].map((match) => match[1]);
    expect(rows).toHaveLength(2);
    // Denied second, so shown first; each row's page is the decision asked with that amount.
    const amounts = [];
    for (const id of rows) amounts.push((await owner.get(`/inbox/decisions/${id}`)).text.match(/&quot;amount&quot;: (\d+)/)?.[1]);
    expect(amounts).toEqual(['1001', '1002']);
    expect(resolved.match(/badge denied/g)).toHaveLength(2);
  });
});
