/**
 * The console's data for `npm run bench:console`, loaded by bulk INSERT … SELECT over generate_series through the
 * service's own database handle (on top of org-seed.ts's memory items): a second space with a member (to measure
 * a member's scoped pages), operations of every kind and status spread over both spaces and the last 30 days —
 * the capability ones with their gate verdicts, a share paused with a pending decision and a share approved, the message ones with a
 * delivery — tasks on the board, and activity entries of every family; then (VACUUM) ANALYZE.
 */
import { setTimeout } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/platform/database.js';
import { sealActivity } from '../../src/org/activity/chain.js';
import { hashPassword } from '../../src/org/people/passwords.js';

export interface ConsoleSeedOptions {
  operations: number;
  activity: number;
  tasks: number;
  owner: { id: string };
  /** The owner's space (General), where most of the work is. */
  spaceId: string;
  /** The agents the work is spread over. */
  agentIds: string[];
}

export interface ConsoleSeedFacts {
  seconds: number;
  /** Seconds per part of the load: operations with their verdicts, decisions and deliveries; tasks; activity; its sealing; ANALYZE. */
  parts: Record<'operations' | 'tasks' | 'activity' | 'seal' | 'analyze', number>;
  member: { email: string; password: string };
  otherSpaceId: string;
  /** Ids that exist, for the detail pages. */
  operationId: string;
  pausedOperationId: string;
  taskId: string;
}

export const MEMBER = { email: 'member@example.com', password: 'bench-member-password' };

export async function seedConsole(database: Database, options: ConsoleSeedOptions): Promise<ConsoleSeedFacts> {
  const started = performance.now();
  const { db } = database;
  const run = (query: ReturnType<typeof sql>) => db.execute(query);
  let lap = performance.now();
  const elapsed = () => {
    const seconds = Math.round((performance.now() - lap) / 100) / 10;
    lap = performance.now();
    return seconds;
  };
  const memberId = 'per_bench_member';
  const otherSpace = 'spc_bench_other';
  await run(sql`INSERT INTO people (id, email, name, role, password_hash) VALUES (${memberId}, ${MEMBER.email}, 'Mia Member', 'member', ${await hashPassword(MEMBER.password)})`);
  await run(sql`INSERT INTO spaces (id, key, name) VALUES (${otherSpace}, 'bench-other', 'Operations team')`);
  await run(sql`INSERT INTO space_members (space_id, person_id) VALUES (${otherSpace}, ${memberId})`);

  const capabilityId = 'cap_bench_deploy';
  await run(sql`INSERT INTO capabilities (id, key, name, description, risk, cost, connector)
                VALUES (${capabilityId}, 'bench-deploy', 'Deploy the website', 'Deploys a build', 'medium', 5,
                        '{"kind":"webhook","url":"https://deploy.example.com/hooks/deploy"}'::jsonb)`);
  const agentsArray = sql.raw(`ARRAY[${options.agentIds.map((id) => `'${id}'`).join(',')}]::text[]`);
  const count = (value: number) => sql.raw(String(value));
  // Every tenth operation is in the member's space; the kinds cycle, and within each kind the statuses (s); one
  // operation every four minutes. A capability's and a task's input name them as their runners store it (the pages
  // read the capability's name and the task's title by it); an ask's holds a question longer than the 120 characters
  // the lists show of it.
  await run(sql`
    INSERT INTO operations (id, kind, status, person_id, client_id, agent_id, space_id, input, progress, result, error,
                            created_at, updated_at, finished_at)
    SELECT 'op_bench_' || g,
           (ARRAY['ask', 'message', 'task', 'capability'])[1 + g % 4],
           (ARRAY['succeeded', 'succeeded', 'succeeded', 'failed', 'running', 'queued', 'paused', 'cancelled'])[1 + s],
           CASE WHEN g % 10 = 0 THEN ${memberId} ELSE ${options.owner.id} END,
           'bench-client', (${agentsArray})[1 + g % ${count(options.agentIds.length)}],
           CASE WHEN g % 10 = 0 THEN ${otherSpace} ELSE ${options.spaceId} END,
           CASE g % 4 WHEN 3 THEN jsonb_build_object('capability_id', ${capabilityId}::text, 'input', jsonb_build_object('text', 'bench work ' || g))
                      WHEN 2 THEN jsonb_build_object('task_id', 'tsk_bench_' || (1 + g % ${count(options.tasks)}), 'run_at', null)
                      WHEN 0 THEN jsonb_build_object('question', 'What did we decide about the bench plan, item ' || g || ', and who ' ||
                                                     'owns its next step now that the deploy window has moved to the end of the week?')
                      ELSE jsonb_build_object('text', 'bench work ' || g) END,
           jsonb_build_array(jsonb_build_object('at', now(), 'message', 'started')),
           CASE WHEN s < 3 THEN jsonb_build_object('text', 'done ' || g) END,
           CASE WHEN s = 3 THEN jsonb_build_object('code', 'connector_failed', 'message', 'the receiver answered 502') END,
           now() - (${count(options.operations)} - g) * interval '4 minutes',
           now() - (${count(options.operations)} - g) * interval '4 minutes',
           CASE WHEN s IN (0, 1, 2, 3, 7) THEN now() - (${count(options.operations)} - g) * interval '4 minutes' + interval '2 seconds' END
    FROM (SELECT g, (g / 4) % 8 AS s FROM generate_series(1, ${count(options.operations)}) AS g) AS series`);
  await run(sql`
    INSERT INTO gate_verdicts (id, capability_id, agent_id, space_id, operation_id, verdict, reasons, rule_ids, shadow, inputs, created_at)
    SELECT 'gv_bench_' || o.n, ${capabilityId}, o.agent_id, o.space_id, o.id,
           CASE WHEN o.status = 'paused' OR (o.status = 'succeeded' AND o.n % 3 = 0) THEN 'require_approval' WHEN o.status = 'failed' THEN 'deny' ELSE 'allow' END,
           '["autonomy 2 allows low-risk actions"]'::jsonb, '[]'::jsonb,
           CASE WHEN o.n % 3 = 0 THEN '[{"rule_id":"rul_shadow","name":"Trial: ask before deploys","would":"require_approval"}]'::jsonb ELSE '[]'::jsonb END,
           '{}'::jsonb, o.created_at
    FROM (SELECT id, agent_id, space_id, status, created_at, substr(id, 10)::int AS n FROM operations WHERE kind = 'capability' AND id LIKE 'op_bench_%') AS o`);
  await run(sql`
    INSERT INTO decisions (id, status, operation_id, capability_id, agent_id, space_id, input, action_hash, risk, reasons, verdict_id, created_at, expires_at)
    SELECT 'dec_bench_' || substr(o.id, 10), 'pending', o.id, ${capabilityId}, o.agent_id, o.space_id, o.input, md5(o.id), 'medium',
           '["medium risk needs a person"]'::jsonb, 'gv_bench_' || substr(o.id, 10), o.created_at, now() + interval '7 days'
    FROM operations o WHERE o.kind = 'capability' AND o.status = 'paused' AND o.id LIKE 'op_bench_%'`);
  // A share of the ones that ran had paused first and were approved in the inbox (its "Recently resolved").
  await run(sql`
    INSERT INTO decisions (id, status, operation_id, capability_id, agent_id, space_id, input, action_hash, risk, reasons, verdict_id, created_at,
                           expires_at, resolved_at, resolved_by, resolved_via)
    SELECT 'dec_bench_' || substr(o.id, 10), 'approved', o.id, ${capabilityId}, o.agent_id, o.space_id, o.input, md5(o.id), 'medium',
           '["medium risk needs a person"]'::jsonb, 'gv_bench_' || substr(o.id, 10), o.created_at, o.created_at + interval '7 days',
           o.created_at + interval '1 second', ${options.owner.id}, 'inbox'
    FROM operations o WHERE o.kind = 'capability' AND o.status = 'succeeded' AND substr(o.id, 10)::int % 3 = 0 AND o.id LIKE 'op_bench_%'`);
  await run(sql`UPDATE operations SET decision_id = 'dec_bench_' || substr(id, 10)
                WHERE id IN (SELECT operation_id FROM decisions WHERE id LIKE 'dec_bench_%')`);
  await run(sql`
    INSERT INTO deliveries (id, operation_id, type, content, status, attempts, first_attempt_at, last_error, created_at, updated_at)
    SELECT 'msg_bench_' || substr(o.id, 10), o.id, 'message', jsonb_build_object('text', 'hello'),
           CASE WHEN o.status = 'failed' THEN 'failed' ELSE 'delivered' END, 1 + substr(o.id, 10)::int % 3, o.created_at,
           CASE WHEN o.status = 'failed' THEN 'the agent answered 503' END, o.created_at, o.created_at
    FROM operations o WHERE o.kind = 'message' AND o.id LIKE 'op_bench_%'`);
  const operationSeconds = elapsed();
  await run(sql`
    INSERT INTO tasks (id, space_id, title, description, status, assignee_agent_id, created_by_type, created_by_id, person_id, created_at, updated_at)
    SELECT 'tsk_bench_' || g, CASE WHEN g % 10 = 0 THEN ${otherSpace} ELSE ${options.spaceId} END, 'Bench task ' || g, 'Work item number ' || g,
           (ARRAY['open', 'in_progress', 'waiting', 'done', 'cancelled'])[1 + g % 5], (${agentsArray})[1 + g % ${count(options.agentIds.length)}],
           'person', ${options.owner.id}, ${options.owner.id}, now() - (${count(options.tasks)} - g) * interval '1 hour', now()
    FROM generate_series(1, ${count(options.tasks)}) AS g`);
  const taskSeconds = elapsed();
  // Activity: the families the log records, newest last, one every 20 seconds; sealed into the chain by the service.
  // The kind does not follow the space (g / 10 shifts it), so the member's tenth holds every family too.
  await run(sql`
    INSERT INTO org_activity (at, kind, summary, space_id, person_id, client_id, agent_id, capability_id, operation_id, subject, details, traceparent)
    SELECT now() - (${count(options.activity)} - g) * interval '20 seconds',
           (ARRAY['tool.called', 'operation.started', 'operation.succeeded', 'gate.verdict', 'decision.opened', 'decision.resolved',
                  'delivery.attempted', 'memory.written', 'task.updated', 'person.signed_in'])[1 + (g + g / 10) % 10],
           'bench activity ' || g,
           CASE WHEN g % 10 = 9 THEN NULL WHEN g % 10 = 0 THEN ${otherSpace} ELSE ${options.spaceId} END,
           CASE WHEN g % 10 = 0 THEN ${memberId} ELSE ${options.owner.id} END,
           'bench-client', (${agentsArray})[1 + g % ${count(options.agentIds.length)}],
           CASE WHEN g % 10 IN (3, 4, 5) THEN ${capabilityId} END,
           'op_bench_' || (1 + g % ${count(options.operations)}), NULL, jsonb_build_object('n', g),
           '00-' || md5('trace' || (g / 5)) || '-00f067aa0ba902b7-01'
    FROM generate_series(1, ${count(options.activity)}) AS g`);
  const activitySeconds = elapsed();
  // The service seals new entries into the chain a batch at a time (src/org/activity/chain.ts), as a live log is sealed
  // within a second of each write. Sealed here, alongside it, before anything is timed (a million entries are a
  // minute of CPU) and before ANALYZE: statistics taken while every hash is NULL have the sealer's once-a-second
  // probe read the whole table instead of org_activity_unsealed_idx (0.4–0.5 s a second at a million entries).
  for (let sealed = await sealActivity(database.db); sealed !== 0; sealed = await sealActivity(database.db)) {
    // undefined: the service's own sealer holds the chain's lock right now.
    if (sealed === undefined) await setTimeout(100);
  }
  const sealSeconds = elapsed();
  // VACUUM too on PostgreSQL, as autovacuum soon would (org-seed.ts): the inbox's count reads decisions_pending_idx
  // alone only once the visibility map says its pages are all visible.
  const analyze = database.engine === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE';
  for (const table of ['operations', 'gate_verdicts', 'decisions', 'deliveries', 'tasks', 'org_activity']) await run(sql.raw(`${analyze} ${table}`));
  return {
    seconds: Math.round((performance.now() - started) / 100) / 10,
    parts: { operations: operationSeconds, tasks: taskSeconds, activity: activitySeconds, seal: sealSeconds, analyze: elapsed() },
    member: MEMBER,
    otherSpaceId: otherSpace,
    operationId: `op_bench_${options.operations - 4}`,
    // g ≡ 3 (mod 4) is a capability operation, (g / 4) mod 8 = 6 a paused one: g = 32k + 27.
    pausedOperationId: `op_bench_${Math.floor((options.operations - 27) / 32) * 32 + 27}`,
    taskId: `tsk_bench_${options.tasks - 1}`,
  };
}
