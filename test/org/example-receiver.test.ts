/**
 * The README's organization file wires the `notify_team` capability to the example agent (examples/agent), so the
 * walkthrough's capability is served by something in the repository: the example verifies the signed action and
 * answers with what it sent.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { newWebhookSecret, startExampleAgent, type ExampleAgent } from '../helpers/agents-at-work.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';

describe.each(engines)('the example agent as a capability receiver on %s', (engine) => {
  let agent: ExampleAgent;
  let org: TestOrg;
  let mcp: OrgMcp;

  beforeAll(async () => {
    const secret = newWebhookSecret();
    agent = await startExampleAgent(secret);
    process.env.EXAMPLE_RECEIVER_SECRET = secret;
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-example-receiver-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Example Co, client_autonomy: 2 }
spaces: [{ key: web, name: Website, members: [${OWNER.email}] }]
capabilities:
  - key: notify_team
    name: Tell the team
    risk: low
    connector: { kind: webhook, url: "${agent.url}/capability", secret_env: EXAMPLE_RECEIVER_SECRET }
    input_schema: { type: object, required: [text], properties: { text: { type: string } } }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    mcp = await connectOrgMcp(org);
  });
  afterAll(async () => {
    await mcp?.close();
    await org?.close();
    await agent?.close();
  });

  it('answers the signed action with what it sent, and the operation succeeds with it', async () => {
    const spaceId = (await mcp.callOk('service_context')).spaces[0].id;
    const [capability] = (await mcp.callOk('list_capabilities')).capabilities;
    const operation = await mcp.callOk('execute_capability', { capability_id: capability.id, input: { text: 'Release is out' }, space_id: spaceId, wait_seconds: 15 });
    expect(operation).toMatchObject({ status: 'succeeded', result: { status: 200, body: { sent: true, capability: 'notify_team', text: 'Release is out' } } });
  });
});
