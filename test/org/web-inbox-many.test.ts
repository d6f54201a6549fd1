/** An inbox with more decisions than a page holds: the newest 50, and how many wait in all. */
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
});
