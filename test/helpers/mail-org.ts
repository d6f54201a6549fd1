/**
 * An organization that emails its people, through a real SMTP server the test started (smtp-receiver.ts):
 *
 * - the owner, Bea and Cy are members of `general`; Dee is an admin;
 * - a connected client's agent is the person's own, so a high-risk `wire_money` its client asks for (client autonomy
 *   2) waits for that person's decision;
 * - `scribe` (responsible: the owner) takes tasks and answers later (202), so it can ask questions on them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Engine } from './databases.js';
import { OWNER, startOrg, type TestOrg } from './org.js';
import { connectOrgMcp, settleOperation, type OrgMcp } from './org-mcp.js';
import { startSmtpReceiver, type SmtpReceiver } from './smtp-receiver.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

export const BEA = { email: 'bea@example.com', password: 'bea-password-123', name: 'Bea Member' } as const;
export const CY = { email: 'cy@example.com', password: 'cy-password-1234', name: 'Cy Member' } as const;
export const DEE = { email: 'dee@example.com', password: 'dee-password-123', name: 'Dee Admin' } as const;
export const MAIL_FROM = 'Mail Co <atrium@example.com>';

export interface MailOrg {
  org: TestOrg;
  smtp: SmtpReceiver;
  /** Where `wire_money` sends its action. */
  bank: WebhookReceiver;
  general: string;
  wireMoney: string;
  scribe: string;
  /** A client of `person`, connected through OAuth, that may act on capabilities. */
  connect(person: { email: string; password: string }, clientName: string): Promise<OrgMcp>;
  /** Asks for `wire_money` through `client`; resolves with the decision it paused on. */
  pauseWire(client: OrgMcp, input: Record<string, unknown>): Promise<{ operationId: string; decisionId: string }>;
  close(): Promise<void>;
}

export async function startMailOrg(engine: Engine): Promise<MailOrg> {
  const smtp = await startSmtpReceiver();
  const bank = await startWebhookReceiver();
  const scribeHook = await startWebhookReceiver();
  scribeHook.answer.status = 202;
  const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-mail-')), 'org.yaml');
  await writeFile(
    orgFile,
    `organization: { name: Mail Co, client_autonomy: 2 }
people:
  - { email: ${BEA.email}, name: ${BEA.name}, role: member, password_env: MAIL_BEA_PASSWORD }
  - { email: ${CY.email}, name: ${CY.name}, role: member, password_env: MAIL_CY_PASSWORD }
  - { email: ${DEE.email}, name: ${DEE.name}, role: admin, password_env: MAIL_DEE_PASSWORD }
spaces:
  - { key: general, name: General, members: [${OWNER.email}, ${BEA.email}, ${CY.email}] }
agents:
  - { key: scribe, name: Scribe, autonomy: 2, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${scribeHook.url}/agent", secret_env: MAIL_SCRIBE_SECRET } }
capabilities:
  - { key: wire_money, name: Wire money, risk: high, connector: { kind: webhook, url: "${bank.url}/wire" } }
`,
  );
  process.env.MAIL_BEA_PASSWORD = BEA.password;
  process.env.MAIL_CY_PASSWORD = CY.password;
  process.env.MAIL_DEE_PASSWORD = DEE.password;
  process.env.MAIL_SCRIBE_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
  const org = await startOrg(engine, { config: { orgFile, mail: { url: smtp.url, from: MAIL_FROM, timeoutSeconds: 5 } } });
  const db = org.service.database;
  const [general] = await db.rows<{ id: string }>(sql`SELECT id FROM spaces WHERE key = 'general'`);
  const [wireMoney] = await db.rows<{ id: string }>(sql`SELECT id FROM capabilities WHERE key = 'wire_money'`);
  const [scribe] = await db.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'scribe'`);
  const clients: OrgMcp[] = [];
  return {
    org,
    smtp,
    bank,
    general: general.id,
    wireMoney: wireMoney.id,
    scribe: scribe.id,
    async connect(person, clientName) {
      const client = await connectOrgMcp(org, { email: person.email, password: person.password, clientName });
      clients.push(client);
      return client;
    },
    async pauseWire(client, input) {
      const started = await client.callOk('execute_capability', { capability_id: wireMoney.id, input, space_id: general.id });
      const paused = await settleOperation(client, started.operation_id);
      if (paused.status !== 'paused') throw new Error(`wire_money ended ${paused.status}, not paused`);
      return { operationId: started.operation_id, decisionId: paused.decision_id };
    },
    async close() {
      for (const client of clients) await client.close();
      await org.close();
      await Promise.all([smtp.close(), bank.close(), scribeHook.close()]);
    },
  };
}
