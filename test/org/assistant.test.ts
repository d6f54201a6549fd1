/**
 * The assistant end to end (DESIGN 4.3 `ask`, 4.5): an `ask` operation answered from the asker's spaces, with
 * citations carrying provenance — extractively without a model, and through a local stand-in of an
 * OpenAI-compatible model (grounded, citations limited to the items it was given, extractive when the model
 * fails or is too slow).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NOTHING_KNOWN } from '../../src/org/assistant/extractive.js';
import { engines } from '../helpers/databases.js';
import { BEA, memoryFingerprint, NOMAD, startMemoryOrg, type MemoryOrg } from '../helpers/memory-fixture.js';
import { startModelStandIn, type ModelStandIn } from '../helpers/model-stand-in.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';

describe.each(engines)('the assistant on %s', (engine) => {
  let m: MemoryOrg;
  let owner: OrgMcp;
  let bea: OrgMcp;
  let model: ModelStandIn;
  let items: Record<'database' | 'oldDatabase' | 'deploys' | 'opsDatabase' | 'secret', { id: string; provenance: unknown }>;
  let tasks: Record<'replica' | 'certificates' | 'secretTask', { id: string; created_at: string; created_by: { id: string } }>;
  beforeAll(async () => {
    m = await startMemoryOrg(engine);
    model = await startModelStandIn();
    owner = await connectOrgMcp(m.org);
    bea = await connectOrgMcp(m.org, { email: BEA.email, password: BEA.password });
    const record = (client: OrgMcp, args: Record<string, unknown>) => client.callOk('record_memory', { kind: 'fact', space_id: m.spaces.general, ...args });
    const oldDatabase = await record(owner, { title: 'Production database', body: 'Production data lives in MySQL 5.7 on one server.' });
    const database = await record(owner, {
      title: 'Production database',
      body: 'We moved off MySQL last year. Production data lives in PostgreSQL 15, with a replica in another region. Backups run nightly.',
      supersedes: oldDatabase.id,
    });
    const deploys = await record(owner, { kind: 'decision', title: 'Deploy days', body: 'We deploy on Tuesdays and never on Fridays.' });
    const opsDatabase = await record(owner, { space_id: m.spaces.ops, title: 'Database on-call', body: 'The database on-call rota is kept by the ops team.' });
    const secret = await record(bea, { space_id: m.spaces.secret, title: 'Secret database', body: 'The production database root password is in the vault.' });
    items = { database, oldDatabase, deploys, opsDatabase, secret };
    const task = (client: OrgMcp, args: Record<string, unknown>) => client.callOk('create_task', { space_id: m.spaces.general, ...args });
    tasks = {
      replica: await task(owner, { title: 'Move the database replica', description: 'The production database replica moves to the new region in May.' }),
      certificates: await task(owner, { title: 'Renew the TLS certificates', description: 'The website certificates expire in March; renew them in February.' }),
      secretTask: await task(bea, { space_id: m.spaces.secret, title: 'Rotate the certificates vault', description: 'Only Bea sees this.' }),
    };
  });
  afterAll(async () => {
    await owner?.close();
    await bea?.close();
    await model?.close();
    await m?.close();
  });
  beforeEach(() => {
    m.org.config.llm = {};
    model.requests.length = 0;
  });

  async function ask(client: OrgMcp, args: Record<string, unknown>) {
    const operation = await client.callOk('ask', { wait_seconds: 20, ...args });
    expect(operation).toMatchObject({ kind: 'ask', status: 'succeeded' });
    return operation.result as { answer: string; citations: Array<{ kind: string; id: string; title: string; excerpt: string; provenance: unknown }>; answered_by: string };
  }

  function useModel(timeoutMs = 5_000) {
    m.org.config.llm = { baseUrl: model.baseUrl, model: 'stand-in-1', apiKey: 'test-key', timeoutMs };
  }

  describe('without a model', () => {
    it('answers from current memory, quoting and attributing the best items with their provenance', async () => {
      const result = await ask(owner, { question: 'Which database do we use in production?' });
      expect(result.answered_by).toBe('extractive');
      const cited = result.citations.map((citation) => citation.id);
      expect(cited[0]).toBe(items.database.id);
      // Superseded versions and other people's spaces are never drawn on.
      expect(cited).not.toContain(items.oldDatabase.id);
      expect(cited).not.toContain(items.secret.id);
      expect(result.citations[0]).toEqual({
        kind: 'memory',
        id: items.database.id,
        title: 'Production database',
        excerpt: 'Production data lives in PostgreSQL 15, with a replica in another region.',
        provenance: items.database.provenance,
      });
      expect(result.answer).toContain('"Production data lives in PostgreSQL 15, with a replica in another region."');
      expect(result.answer).toContain(`[${items.database.id}]`);
      expect(result.answer).toContain('recorded by Owner');
      // Then tasks, after every memory item.
      expect(result.citations.map((citation) => citation.kind)).toEqual(['memory', 'memory', 'task']);
      expect(result.citations[2]).toEqual({
        kind: 'task',
        id: tasks.replica.id,
        title: 'Move the database replica',
        excerpt: expect.stringContaining('replica moves to the new region'),
        provenance: { recorded_by: { type: 'person', id: tasks.replica.created_by.id, name: 'Owner' }, recorded_at: tasks.replica.created_at },
      });
      expect(result.answer).toMatch(/Related tasks:\n1\. Move the database replica \(task, open, created by Owner on \d{4}-\d{2}-\d{2}\): ".*" \[tsk_/);
    });

    it('answers from tasks when memory knows nothing, never from another person’s space', async () => {
      const result = await ask(owner, { question: 'When do the certificates expire?' });
      expect(result.citations.map((citation) => citation.id)).toEqual([tasks.certificates.id]);
      expect(result.answer).toContain('Nothing in company memory answers this; related tasks:');
      expect(result.answer).toContain('certificates expire in March');
    });

    it('answers only from the space given', async () => {
      const result = await ask(owner, { question: 'Who keeps the database on-call rota?', space_id: m.spaces.ops });
      expect(result.citations.map((citation) => citation.id)).toEqual([items.opsDatabase.id]);
    });

    it('says plainly when nothing is known', async () => {
      const result = await ask(owner, { question: 'What is the parking policy for bicycles?' });
      expect(result).toEqual({ answer: NOTHING_KNOWN, citations: [], answered_by: 'extractive' });
    });

    it('shows the operation to its person through get_operation, and a retry with the key returns it', async () => {
      const first = await owner.callOk('ask', { question: 'When do we deploy?', idempotency_key: 'ask-once', wait_seconds: 20 });
      const again = await owner.callOk('ask', { question: 'When do we deploy?', idempotency_key: 'ask-once', wait_seconds: 20 });
      expect(again.operation_id).toBe(first.operation_id);
      expect(first.result.citations[0].id).toBe(items.deploys.id);
      expect(await owner.callOk('get_operation', { operation_id: first.operation_id })).toEqual(first);
      expect((await bea.callError('get_operation', { operation_id: first.operation_id })).code).toBe('not_found');
      expect((await owner.callError('ask', { question: 'Something else?', idempotency_key: 'ask-once' })).code).toBe('idempotency_conflict');
    });

    it('refuses bad input, a foreign space and a person without spaces, starting nothing', async () => {
      const expectRefused = async (client: OrgMcp, args: Record<string, unknown>, code: string, field?: string) => {
        const before = await memoryFingerprint(m.org);
        const error = await client.callError('ask', args);
        expect(error.code).toBe(code);
        if (field) expect(error.details.issues.map((issue: { field: string }) => issue.field)).toContain(field);
        expect(await memoryFingerprint(m.org)).toBe(before);
      };
      await expectRefused(owner, { question: '  ' }, 'invalid_request', 'question');
      await expectRefused(owner, { question: 'x'.repeat(2_001) }, 'invalid_request', 'question');
      await expectRefused(owner, { question: 'ok?', wait_seconds: 21 }, 'invalid_request', 'wait_seconds');
      await expectRefused(owner, { question: 'ok?', space_id: m.spaces.secret }, 'not_found');
      const nomad = await connectOrgMcp(m.org, { email: NOMAD.email, password: NOMAD.password });
      try {
        await expectRefused(nomad, { question: 'Anything?' }, 'no_space');
      } finally {
        await nomad.close();
      }
    });
  });

  describe('with a model (a local stand-in)', () => {
    it('grounds the model on the retrieved items and keeps its citations of them', async () => {
      useModel();
      model.reply = (request) => {
        const cited = /\[(mem_[A-Za-z0-9_-]+)\]/.exec(request.messages[1].content)![1];
        return { content: `Production runs on PostgreSQL 15 [${cited}].` };
      };
      const result = await ask(owner, { question: 'Which database do we use in production?' });
      expect(result).toEqual({
        answer: `Production runs on PostgreSQL 15 [${items.database.id}].`,
        citations: [expect.objectContaining({ kind: 'memory', id: items.database.id, provenance: items.database.provenance })],
        answered_by: 'model',
      });
      expect(model.requests).toHaveLength(1);
      const [request] = model.requests;
      expect(request.model).toBe('stand-in-1');
      expect(request.messages[0].content).toMatch(/cite/i);
      expect(request.messages[1].content).toContain('Which database do we use in production?');
      expect(request.messages[1].content).toContain(`[${items.database.id}]`);
      expect(request.messages[1].content).toContain('PostgreSQL 15');
      expect(request.messages[1].content).not.toContain(items.oldDatabase.id);
      expect(request.messages[1].content).not.toContain(items.secret.id);
    });

    it('drops a citation the model invented, from the citations and the text', async () => {
      useModel();
      model.reply = () => ({ content: `PostgreSQL 15 [${items.database.id}], and Redis for caching [mem_inventedXYZ12345].` });
      const result = await ask(owner, { question: 'Which database do we use in production?' });
      expect(result.answered_by).toBe('model');
      expect(result.citations.map((citation) => citation.id)).toEqual([items.database.id]);
      expect(result.answer).toBe(`PostgreSQL 15 [${items.database.id}], and Redis for caching.`);
      // An id from a space the asker cannot see is just as unknown.
      model.reply = () => ({ content: `See [${items.secret.id}, ${items.database.id}].` });
      const second = await ask(owner, { question: 'Which database do we use in production?' });
      expect(second.citations.map((citation) => citation.id)).toEqual([items.database.id]);
      expect(second.answer).toBe(`See [${items.database.id}].`);
    });

    it.each([
      ['errs', 5_000, { status: 500, error: 'the model is down' }],
      ['is too slow', 300, { delayMs: 3_000, content: 'too late' }],
    ] as const)('answers extractively when the model %s', async (_case, timeoutMs, reply) => {
      useModel(timeoutMs);
      model.reply = () => reply;
      const result = await ask(owner, { question: 'Which database do we use in production?' });
      expect(model.requests).toHaveLength(1);
      expect(result.answered_by).toBe('extractive');
      expect(result.citations[0].id).toBe(items.database.id);
    });

    it('does not ask the model when nothing is known', async () => {
      useModel();
      const result = await ask(owner, { question: 'What is the parking policy for bicycles?' });
      expect(model.requests).toHaveLength(0);
      expect(result).toEqual({ answer: NOTHING_KNOWN, citations: [], answered_by: 'extractive' });
    });
  });

  it('records each question as an ask operation of the assistant agent', async () => {
    const operation = await owner.callOk('ask', { question: 'When do we deploy?', wait_seconds: 20 });
    const [row] = await m.org.service.database.rows<{ kind: string; key: string }>(
      sql`SELECT o.kind, a.key FROM operations o JOIN agents a ON a.id = o.agent_id WHERE o.id = ${operation.operation_id}`,
    );
    expect(row).toEqual({ kind: 'ask', key: 'assistant' });
  });
});
