/**
 * The organization's tables (DESIGN section 4.1): the organization itself, people, spaces and their
 * members, agents, capabilities and standing rules as declared by the organization file, and the state
 * behind the people's web pages (sessions, the cookie-signing secret); sign-in rate-limit counters are the
 * platform's (src/platform/rate-limit.ts).
 * Everything lives in the database so any process can serve any request (DESIGN section 6).
 */
import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, customType, doublePrecision, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, index } from 'drizzle-orm/pg-core';

/**
 * The shapes the JSON columns hold (STYLE: "JSON columns carry their type"). They are declared here, with the
 * tables, so the catalogue imports no concept; each concept's own types are these (capabilities' `Connector`,
 * tasks' `Schedule`, an operation's error and progress events).
 */
export type ConnectorJson = { kind: 'webhook'; url: string; secret_env?: string } | { kind: 'content'; action: string };
export type ScheduleJson = { at: string; timezone: string } | { cron: string; timezone: string };
export type OperationErrorJson = { code: string; message: string };
export type ProgressEventJson = { at: string; message: string; percent?: number };
export type InputConditionJson = { path: string; op: string; value: unknown };
type JsonObject = Record<string, unknown>;

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow();
const when = (name: string) => timestamp(name, { withTimezone: true, mode: 'string' });
/**
 * Who manages a record (DESIGN 4.6): `file` records are declared in the organization file and edited only there;
 * `console` records were made on the web (or by the first start) and `org apply` never removes them. A file that
 * declares a console record takes it over.
 */
const managedBy = () => text('managed_by', { enum: ['file', 'console'] }).notNull().default('console');
/** A `whsec_` signing secret the server generated (shown once when made); null when `secret_env` names one. */
const signingSecret = () => text('signing_secret');

/** One row: the organization this service runs. */
export const organization = pgTable('organization', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** Autonomy given to every newly connected OAuth client (DESIGN 4.1); 1 unless the file says otherwise. */
  clientAutonomy: integer('client_autonomy').notNull().default(1),
  /** How long a decision waits for a person before it expires (DESIGN 4.4 `decision_ttl`); default 7 days. */
  decisionTtlSeconds: integer('decision_ttl_seconds').notNull().default(604_800),
  /**
   * Two-person rule by risk tier (DESIGN 4.8): how many different people must approve a decision on a capability
   * of that risk, such as `{critical: 2}`; a tier not named needs one.
   */
  approvalsByRisk: jsonb('approvals_by_risk').$type<Partial<Record<'low' | 'medium' | 'high' | 'critical', number>>>().notNull().default({}),
  /**
   * Risk tiers whose decisions an AI client may not resolve over MCP (DESIGN 4.9, issue 21 item 5):
   * `resolve_decision` hands such a decision to the person's browser (its decision page) instead, whatever
   * scopes the client holds.
   */
  decideInBrowser: jsonb('decide_in_browser').$type<Array<'low' | 'medium' | 'high' | 'critical'>>().notNull().default([]),
  /** Whether an MCP App may resolve a decision inside the AI client (issue 21 item 4); otherwise it opens the decision page. */
  inAppDecisions: boolean('in_app_decisions').notNull().default(false),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const people = pgTable('people', {
  id: text('id').primaryKey(),
  /** Stored lower-cased so sign-in and the organization file match regardless of case. */
  email: text('email').notNull().unique(),
  name: text('name').notNull(),
  role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
  /** `scrypt$N$r$p$salt$hash`; null for a person who cannot sign in (declared without a password). */
  passwordHash: text('password_hash'),
  /** `removed`: cannot sign in, holds no grants, sessions or memberships; kept so the record keeps its names. */
  status: text('status', { enum: ['active', 'removed'] }).notNull().default('active'),
  /** The person's choice on /account: email when a decision or a question waits for them (DESIGN 4.8). */
  emailNotifications: boolean('email_notifications').notNull().default(true),
  managedBy: managedBy(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * An invitation to join (DESIGN 4.6): a one-time link whose token only the invited person holds (only its SHA-256
 * is stored); accepting it before `expires_at` makes the person, who sets their own password.
 */
export const invitations = pgTable('invitations', {
  id: text('id').primaryKey(),
  email: text('email').notNull(),
  name: text('name').notNull(),
  role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
  /** Spaces the person joins on accepting. */
  spaceIds: jsonb('space_ids').$type<string[]>().notNull().default([]),
  tokenHash: text('token_hash').notNull().unique(),
  invitedBy: text('invited_by').references(() => people.id, { onDelete: 'set null' }),
  expiresAt: when('expires_at').notNull(),
  acceptedAt: when('accepted_at'),
  /** Withdrawn by an owner or admin before it was used. */
  revokedAt: when('revoked_at'),
  personId: text('person_id').references(() => people.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
});

export const spaces = pgTable('spaces', {
  id: text('id').primaryKey(),
  key: text('key').notNull().unique(),
  name: text('name').notNull(),
  managedBy: managedBy(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const spaceMembers = pgTable(
  'space_members',
  {
    spaceId: text('space_id').notNull().references(() => spaces.id, { onDelete: 'cascade' }),
    personId: text('person_id').notNull().references(() => people.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.spaceId, table.personId] }), index('space_members_person_idx').on(table.personId)],
);

/**
 * Agents: the built-in assistant, agents declared in the organization file, and every OAuth client a
 * person authorized (kind `client`, one per client and person, responsible = that person).
 */
export const agents = pgTable(
  'agents',
  {
    id: text('id').primaryKey(),
    /** Stable key from the organization file (`assistant` for the built-in one); null for clients. */
    key: text('key').unique(),
    kind: text('kind', { enum: ['builtin', 'declared', 'client'] }).notNull(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    /** 0 observe, 1 propose, 2 act within rules, 3 trusted (DESIGN 4.2). */
    autonomy: integer('autonomy').notNull(),
    responsiblePersonId: text('responsible_person_id').references(() => people.id, { onDelete: 'set null' }),
    /** Units per calendar month; null means no budget limit. */
    budget: integer('budget'),
    /** How the agent receives work (`{kind: 'webhook', url, secret_env}`); null for built-in and clients. */
    delivery: jsonb('delivery').$type<JsonObject>(),
    signingSecret: signingSecret(),
    /** The OAuth client behind a `client` agent. */
    clientId: text('client_id'),
    status: text('status', { enum: ['active', 'disabled'] }).notNull().default('active'),
    managedBy: managedBy(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    uniqueIndex('agents_client_person_idx').on(table.clientId, table.responsiblePersonId).where(sql`kind = 'client'`),
  ],
);

/** Capabilities the gate will decide on (its runtime is a later issue; the file's declarations are kept). */
export const capabilities = pgTable('capabilities', {
  id: text('id').primaryKey(),
  key: text('key').notNull().unique(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  risk: text('risk', { enum: ['low', 'medium', 'high', 'critical'] }).notNull(),
  cost: integer('cost').notNull().default(0),
  connector: jsonb('connector').$type<ConnectorJson>().notNull(),
  inputSchema: jsonb('input_schema').$type<JsonObject>(),
  enabled: boolean('enabled').notNull().default(true),
  signingSecret: signingSecret(),
  managedBy: managedBy(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * Standing rules, from the organization file (in its order) and from the console; every matching rule counts
 * (DESIGN 4.4). Re-applying the file replaces only its own rules.
 */
export const standingRules = pgTable('standing_rules', {
  id: text('id').primaryKey(),
  /** The order the rules are shown in: the file's first, then the console's. */
  position: integer('position').notNull(),
  name: text('name').notNull(),
  when: jsonb('when').notNull(),
  then: text('then', { enum: ['deny', 'require_approval', 'allow'] }).notNull(),
  /** `shadow`: the gate records what the rule would have done and never enforces it. */
  mode: text('mode', { enum: ['enforce', 'shadow'] }).notNull().default('enforce'),
  /** With `require_approval`: how many different people must approve (the two-person rule is 2); null means one. */
  approvals: integer('approvals'),
  managedBy: managedBy(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** Secrets every process of the service must share (the cookie-signing key), created once. */
export const orgSecrets = pgTable('org_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
});

/** A signed-in browser. The cookie carries a random token; only its SHA-256 is stored. */
export const webSessions = pgTable(
  'web_sessions',
  {
    id: text('id').primaryKey(),
    personId: text('person_id').notNull().references(() => people.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'string' }).notNull(),
    /** The User-Agent the person signed in with (cut to 512 characters), so /account can name where they are signed in. */
    userAgent: text('user_agent'),
  },
  (table) => [index('web_sessions_person_idx').on(table.personId)],
);

/**
 * Operations (DESIGN 4.4): asynchronous work a tool started — ask, message, task, capability. The row is
 * the state a client polls with `get_operation`; the work itself runs from the durable job queue
 * (operations/operations.ts), so it survives a restart and any process may pick it up.
 */
export const operations = pgTable(
  'operations',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['ask', 'message', 'task', 'capability'] }).notNull(),
    status: text('status', { enum: ['queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'] }).notNull(),
    /** Whose operation it is: only this person sees it. */
    personId: text('person_id').notNull().references(() => people.id, { onDelete: 'cascade' }),
    /** The OAuth client that started it; null when the organization itself did (a scheduled task run). */
    clientId: text('client_id'),
    /** The agent doing the work (the assistant, a messaged agent, a task's assignee, the acting client). */
    agentId: text('agent_id').references(() => agents.id, { onDelete: 'set null' }),
    spaceId: text('space_id').references(() => spaces.id, { onDelete: 'set null' }),
    /** What the work needs, as the kind's runner reads it (the question, the message, the task id, …). */
    input: jsonb('input').$type<JsonObject>().notNull(),
    /** `[{at, message, percent?}]`, appended in order. */
    progress: jsonb('progress').$type<ProgressEventJson[]>().notNull().default(sql`'[]'::jsonb`),
    result: jsonb('result'),
    /** `{code, message}` once failed. */
    error: jsonb('error').$type<OperationErrorJson>(),
    decisionId: text('decision_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'string' }),
    /** When a capability operation's cost was charged to its agent: once, however often its runner runs. */
    chargedAt: timestamp('charged_at', { withTimezone: true, mode: 'string' }),
    /** The W3C trace context of the request that started it, passed on to its deliveries and connector calls. */
    traceparent: text('traceparent'),
  },
  (table) => [
    index('operations_person_idx').on(table.personId, table.createdAt),
    // The console's lists (newest first, by status, space or agent) and its home (in progress, failed today).
    // Each ends with the id, the lists' tie-break, so a page is read in index order without a sort.
    index('operations_created_idx').on(table.createdAt, table.id),
    index('operations_status_idx').on(table.status, table.createdAt, table.id),
    index('operations_space_idx').on(table.spaceId, table.createdAt, table.id),
    index('operations_agent_idx').on(table.agentId, table.createdAt, table.id),
    index('operations_capability_idx')
      .on(sql`(${table.input} ->> 'capability_id')`, table.createdAt, table.id)
      .where(sql`kind = 'capability'`),
    // A person's own questions, newest first (/ask): by person alone, a person whose agents ran a million other
    // operations would read them all to find ten questions (400,000 rows: 87 ms, against 4 ms with this index).
    index('operations_person_ask_idx').on(table.personId, table.createdAt, table.id).where(sql`kind = 'ask'`),
  ],
);

/**
 * Idempotency keys of write tools (DESIGN 4.3), per person and client: the hash of the arguments the key was
 * first used with, and what that call produced — its result, or the operation it started. Kept 24 hours.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    personId: text('person_id').notNull().references(() => people.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull(),
    key: text('key').notNull(),
    /** SHA-256 of the tool name and its canonical arguments. */
    argumentsHash: text('arguments_hash').notNull(),
    result: jsonb('result'),
    operationId: text('operation_id'),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.personId, table.clientId, table.key] }), index('idempotency_keys_created_idx').on(table.createdAt)],
);

// ---------------------------------------------------------------------------------------------------------
// Capabilities through the gate: verdicts, decisions, learned rules, agent budgets (DESIGN 4.4)
// ---------------------------------------------------------------------------------------------------------

/** Every verdict the gate gave, with the inputs it decided over (DESIGN 4.4: "stores each verdict with its inputs"). */
export const gateVerdicts = pgTable(
  'gate_verdicts',
  {
    id: text('id').primaryKey(),
    capabilityId: text('capability_id').notNull(),
    agentId: text('agent_id').notNull(),
    spaceId: text('space_id'),
    /** The operation it decided; null for describe_capability and dry runs. */
    operationId: text('operation_id'),
    verdict: text('verdict', { enum: ['allow', 'require_approval', 'deny'] }).notNull(),
    reasons: jsonb('reasons').$type<string[]>().notNull(),
    ruleIds: jsonb('rule_ids').$type<string[]>().notNull(),
    shadow: jsonb('shadow').notNull(),
    /** The gate's whole input (capability, agent, budget spent, action input, rules, time). */
    inputs: jsonb('inputs').notNull(),
    createdAt: createdAt(),
  },
  (table) => [
    index('gate_verdicts_operation_idx').on(table.operationId),
    // A capability's recent verdicts and its shadow rules' firings over 30 days (the console's capability page).
    index('gate_verdicts_capability_idx').on(table.capabilityId, table.createdAt),
  ],
);

/**
 * Decisions (DESIGN 4.4): a paused action awaiting a person, bound to the SHA-256 of (capability,
 * canonical input, agent, space) so that approving runs exactly that action.
 */
export const decisions = pgTable(
  'decisions',
  {
    id: text('id').primaryKey(),
    status: text('status', { enum: ['pending', 'approved', 'denied', 'expired'] }).notNull(),
    operationId: text('operation_id').notNull().unique(),
    capabilityId: text('capability_id').notNull().references(() => capabilities.id, { onDelete: 'cascade' }),
    agentId: text('agent_id').notNull().references(() => agents.id, { onDelete: 'cascade' }),
    spaceId: text('space_id').references(() => spaces.id, { onDelete: 'set null' }),
    input: jsonb('input').notNull(),
    actionHash: text('action_hash').notNull(),
    risk: text('risk', { enum: ['low', 'medium', 'high', 'critical'] }).notNull(),
    reasons: jsonb('reasons').$type<string[]>().notNull(),
    verdictId: text('verdict_id').notNull(),
    requestedAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'string' }).notNull(),
    resolvedAt: timestamp('resolved_at', { withTimezone: true, mode: 'string' }),
    resolvedBy: text('resolved_by').references(() => people.id, { onDelete: 'set null' }),
    /** Where the person resolved it: `inbox`, or the id of the MCP client they resolved it through. */
    resolvedVia: text('resolved_via'),
    note: text('note'),
    /** Different people who must approve before the action runs (DESIGN 4.8: a rule or the risk tier says); 1 usually. */
    approvalsRequired: integer('approvals_required').notNull().default(1),
    /** When the half-way reminder went out (DESIGN 4.8), so it goes once. */
    remindedAt: when('reminded_at'),
  },
  (table) => [
    index('decisions_status_idx').on(table.status, table.requestedAt),
    // The inbox's count on every console page (decisions/records.ts pendingDecisionsCount), read from the index alone.
    index('decisions_pending_idx').on(table.agentId, table.expiresAt).where(sql`status = 'pending'`),
    // The inbox's "Recently resolved" (read backwards: newest resolution first), however many decisions still wait.
    index('decisions_resolved_idx').on(table.resolvedAt).where(sql`status <> 'pending'`),
  ],
);

/**
 * Each approval of a decision that needs more than one (DESIGN 4.8): one per person, with where they gave it; the
 * action runs when the last required approval is recorded.
 */
export const decisionApprovals = pgTable(
  'decision_approvals',
  {
    decisionId: text('decision_id').notNull().references(() => decisions.id, { onDelete: 'cascade' }),
    personId: text('person_id').notNull().references(() => people.id, { onDelete: 'cascade' }),
    /** `inbox`, or the id of the MCP client the person approved through. */
    via: text('via').notNull(),
    note: text('note'),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.decisionId, table.personId] })],
);

/**
 * Rules learned from "approve and remember" (DESIGN 4.4): allow this agent this capability (optionally only
 * for the same input) until an optional date. Kept apart from the file's rules, which re-applying the file
 * replaces; a revoked rule stays for the record.
 */
export const learnedRules = pgTable(
  'learned_rules',
  {
    id: text('id').primaryKey(),
    agentId: text('agent_id').notNull().references(() => agents.id, { onDelete: 'cascade' }),
    capabilityId: text('capability_id').notNull().references(() => capabilities.id, { onDelete: 'cascade' }),
    /** Input conditions the rule is limited to (`[{path: '', op: 'eq', value: <input>}]`), or null for any input. */
    inputConditions: jsonb('input_conditions').$type<InputConditionJson[]>(),
    until: timestamp('until', { withTimezone: true, mode: 'string' }),
    createdBy: text('created_by').references(() => people.id, { onDelete: 'set null' }),
    decisionId: text('decision_id'),
    createdAt: createdAt(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'string' }),
  },
  (table) => [index('learned_rules_agent_idx').on(table.agentId)],
);

// ---------------------------------------------------------------------------------------------------------
// Tracked tasks (DESIGN 4.1, 4.3, 4.5): tasks, their progress events and their questions (org/tasks/).
// ---------------------------------------------------------------------------------------------------------

/** PostgreSQL's full-text document type, which drizzle has no column for; only ever generated, never written. */
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/**
 * A task: tracked work placed in a space, optionally assigned to an agent and run on a schedule. Its status
 * moves only through the table of org/tasks/states.ts. `next_run_at` is the next due run of its schedule (null
 * when it has none left); a run fires once, claimed by a conditional UPDATE of that column.
 */
export const tasks = pgTable(
  'tasks',
  {
    id: text('id').primaryKey(),
    spaceId: text('space_id').notNull().references(() => spaces.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    status: text('status', { enum: ['open', 'in_progress', 'waiting', 'done', 'cancelled'] }).notNull().default('open'),
    assigneeAgentId: text('assignee_agent_id').references(() => agents.id, { onDelete: 'set null' }),
    createdByType: text('created_by_type', { enum: ['person', 'agent'] }).notNull(),
    createdById: text('created_by_id').notNull(),
    /** The person the task works for: its operations (delivery on create, scheduled runs) are theirs. */
    personId: text('person_id').notNull().references(() => people.id, { onDelete: 'cascade' }),
    /** The OAuth client it was created through. */
    clientId: text('client_id'),
    /** `{at, timezone}` or `{cron, timezone}` (org/tasks/schedules.ts). */
    schedule: jsonb('schedule').$type<ScheduleJson>(),
    nextRunAt: timestamp('next_run_at', { withTimezone: true, mode: 'string' }),
    /** What the agent reported when it last completed the task. */
    result: jsonb('result'),
    /** Full-text search (searchTasks): title weighs more than description. */
    search: tsvector('search').generatedAlwaysAs(
      sql`setweight(to_tsvector('english'::regconfig, title), 'A') || setweight(to_tsvector('english'::regconfig, description), 'B')`,
    ),
    /** Lower-cased text for the trigram fallback of short or partial words. */
    searchText: text('search_text').generatedAlwaysAs(sql`lower(title || ' ' || description)`),
    /** Unique per task (platform/time.ts orderedNow): the list's sort key and cursor. */
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    index('tasks_space_created_idx').on(table.spaceId, table.createdAt.desc()),
    // The console's task board: a column per status, newest first, across spaces or in one.
    index('tasks_status_created_idx').on(table.status, table.createdAt.desc().nullsLast()),
    index('tasks_space_status_created_idx').on(table.spaceId, table.status, table.createdAt.desc().nullsLast()),
    index('tasks_assignee_idx').on(table.assigneeAgentId),
    index('tasks_next_run_idx').on(table.nextRunAt).where(sql`next_run_at IS NOT NULL`),
    // fastupdate off: the embedded database runs no autovacuum to merge GIN's pending list, and while that
    // list holds entries the planner scans the table instead (measured on content search, content/schema.ts).
    index('tasks_search_idx').using('gin', table.search).with({ fastupdate: false }),
    index('tasks_search_text_idx').using('gin', sql`${table.searchText} gin_trgm_ops`).with({ fastupdate: false }),
  ],
);

/** A task's progress events, in order: runs, deliveries, what its agent reported, answers, the end. */
export const taskProgress = pgTable(
  'task_progress',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    taskId: text('task_id').notNull().references(() => tasks.id, { onDelete: 'cascade' }),
    at: timestamp('at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    message: text('message').notNull(),
    percent: doublePrecision('percent'),
    /** The operation the event belongs to (a delivery or a scheduled run). */
    operationId: text('operation_id'),
  },
  (table) => [index('task_progress_task_idx').on(table.taskId, table.id)],
);

/** Questions a task's agent asked its people (DESIGN 4.5 `/questions`), and who answered them. */
export const taskQuestions = pgTable(
  'task_questions',
  {
    id: text('id').primaryKey(),
    taskId: text('task_id').notNull().references(() => tasks.id, { onDelete: 'cascade' }),
    text: text('text').notNull(),
    askedByAgentId: text('asked_by_agent_id').references(() => agents.id, { onDelete: 'set null' }),
    /** The operation the agent was working in when it asked: the answer is delivered to it. */
    operationId: text('operation_id'),
    askedAt: timestamp('asked_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    answer: text('answer'),
    answeredAt: timestamp('answered_at', { withTimezone: true, mode: 'string' }),
    answeredByPersonId: text('answered_by_person_id').references(() => people.id, { onDelete: 'set null' }),
  },
  (table) => [index('task_questions_task_idx').on(table.taskId, table.askedAt), index('task_questions_open_idx').on(table.taskId).where(sql`answer IS NULL`)],
);

// ---------------------------------------------------------------------------------------------------------
// Company memory (DESIGN 4.1, 4.3; org/memory/)

/**
 * Memory items: facts, decisions and standing instructions, each with its provenance. An item is never
 * edited: a new version is recorded with `supersedes`, which marks the old one superseded (with the time,
 * so `as_of` can tell what was current when). Every version of one item shares its `lineage_id` (the first
 * version's id), so `get_memory` reads the whole history with one indexed lookup.
 */
export const memoryItems = pgTable(
  'memory_items',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['fact', 'decision', 'instruction'] }).notNull(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    /** A JSON array of strings: `to_tsvector(regconfig, jsonb)` is immutable where `array_to_string` is not. */
    tags: jsonb('tags').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    spaceId: text('space_id').notNull().references(() => spaces.id, { onDelete: 'cascade' }),
    status: text('status', { enum: ['current', 'superseded'] }).notNull().default('current'),
    validFrom: timestamp('valid_from', { withTimezone: true, mode: 'string' }),
    validUntil: timestamp('valid_until', { withTimezone: true, mode: 'string' }),
    lineageId: text('lineage_id').notNull(),
    supersedes: text('supersedes'),
    supersededBy: text('superseded_by'),
    /** When the next version was recorded; null while current. */
    supersededAt: timestamp('superseded_at', { withTimezone: true, mode: 'string' }),
    recordedByType: text('recorded_by_type', { enum: ['person', 'agent'] }).notNull(),
    recordedById: text('recorded_by_id').notNull(),
    /** The recorder's name when recording, kept as provenance even if they are renamed or removed later. */
    recordedByName: text('recorded_by_name').notNull(),
    onBehalfOfPersonId: text('on_behalf_of_person_id'),
    clientId: text('client_id'),
    operationId: text('operation_id'),
    /** Unique per item (platform/time.ts orderedNow): the tie-breaker of ranked pages and the as_of clock. */
    recordedAt: timestamp('recorded_at', { withTimezone: true, mode: 'string' }).notNull(),
    /** Full-text document: title weighted A, body B, tags C (DESIGN 4.5). */
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(
        sql`setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B') || setweight(to_tsvector('english', tags), 'C')`,
      ),
    /** Lower-cased text for the trigram fallback (partial and short words). */
    searchText: text('search_text').notNull().generatedAlwaysAs(sql`lower(title || ' ' || body || ' ' || tags::text)`),
  },
  (table) => [
    index('memory_items_search_idx').using('gin', table.search).with({ fastupdate: false }),
    index('memory_items_search_text_idx').using('gin', sql`${table.searchText} gin_trgm_ops`).with({ fastupdate: false }),
    index('memory_items_lineage_idx').on(table.lineageId, table.recordedAt),
    index('memory_items_space_idx').on(table.spaceId, table.recordedAt),
    /** Newest first across spaces: the trigram fallback's order. */
    index('memory_items_recorded_idx').on(table.recordedAt),
    uniqueIndex('memory_items_supersedes_idx').on(table.supersedes),
  ],
);

/**
 * The newest items of each space again, with their full-text document: what search's first tier ranks
 * (memory/search.ts). A word's posting list in memory_items_search_idx holds every item with that word, and a
 * search decodes all of it however few of them are recent (12,000 entries, 1.5 ms, for a word in 1 % of a million
 * items); here it holds only the recent ones. Kept by a statement trigger on memory_items (drizzle/0009): each
 * insert adds its items, and now and then trims its spaces to their newest `RECENT_WINDOW` (a few more in between);
 * an item deleted goes with it.
 */
export const memoryRecent = pgTable(
  'memory_recent',
  {
    itemId: text('item_id')
      .primaryKey()
      .references(() => memoryItems.id, { onDelete: 'cascade' }),
    spaceId: text('space_id').notNull(),
    recordedAt: timestamp('recorded_at', { withTimezone: true, mode: 'string' }).notNull(),
    search: tsvector('search').notNull(),
  },
  (table) => [index('memory_recent_search_idx').using('gin', table.search).with({ fastupdate: false }), index('memory_recent_space_idx').on(table.spaceId, table.recordedAt)],
);

// ---------------------------------------------------------------------------------------------------------
// Agents at work (DESIGN 4.5): monthly usage, webhook deliveries and the agent API's callback tokens.
// ---------------------------------------------------------------------------------------------------------

/** Units an agent used per calendar month (UTC), `month` as `YYYY-MM`; charged by the gate (agents/usage.ts). */
export const agentMonthlyUsage = pgTable(
  'agent_usage',
  {
    agentId: text('agent_id').notNull().references(() => agents.id, { onDelete: 'cascade' }),
    month: text('month').notNull(),
    used: integer('used').notNull().default(0),
    /** When `budget.threshold` (80 % used) was announced for this month, so it is announced once. */
    thresholdAnnouncedAt: when('threshold_announced_at'),
    updatedAt: updatedAt(),
  },
  (table) => [primaryKey({ columns: [table.agentId, table.month] })],
);

/**
 * One piece of work sent to an agent's webhook (delivery/deliveries.ts): a message, an assigned task, or the
 * answer to a task's question. Its id is the `webhook-id` of every attempt, so the agent can drop repeats.
 */
export const deliveries = pgTable(
  'deliveries',
  {
    id: text('id').primaryKey(),
    operationId: text('operation_id').notNull().references(() => operations.id, { onDelete: 'cascade' }),
    type: text('type', { enum: ['message', 'task', 'answer'] }).notNull(),
    /** What the body carries beside the envelope (`text`, `task`, `answer`), fixed when the delivery is made. */
    content: jsonb('content').$type<JsonObject>().notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** The retry window (DESIGN 4.5: 10 minutes) counts from the first attempt. */
    firstAttemptAt: timestamp('first_attempt_at', { withTimezone: true, mode: 'string' }),
    lastError: text('last_error'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index('deliveries_operation_idx').on(table.operationId)],
);

/**
 * Bearer tokens of the agent API (`callback.token`): random, only their SHA-256 stored. Each attempt of a
 * delivery carries a fresh one; every token of an operation stays valid until `expires_at`, and never longer
 * than a grace period after the operation ends (delivery/callback-tokens.ts).
 */
export const callbackTokens = pgTable(
  'callback_tokens',
  {
    hash: text('hash').primaryKey(),
    operationId: text('operation_id').notNull().references(() => operations.id, { onDelete: 'cascade' }),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'string' }).notNull(),
    createdAt: createdAt(),
  },
  (table) => [index('callback_tokens_operation_idx').on(table.operationId)],
);

// ---------------------------------------------------------------------------------------------------------
// The activity log: the organization's audit log (DESIGN 4.6, activity/)
// ---------------------------------------------------------------------------------------------------------

/**
 * One thing that changed or was decided, written in the transaction of the change it records and never
 * updated afterwards except once, to seal it into the hash chain (activity/chain.ts): `position` counts the
 * chain from 1, `hash` is SHA-256 over the entry's content and `prev_hash`, the hash of the entry before it.
 */
export const orgActivity = pgTable(
  'org_activity',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    at: timestamp('at', { withTimezone: true, mode: 'string' }).notNull(),
    /** What happened, as `<thing>.<event>`: `operation.started`, `gate.verdict`, `decision.resolved`, … */
    kind: text('kind').notNull(),
    /** One line for people. */
    summary: text('summary').notNull(),
    spaceId: text('space_id'),
    /** The person who did it, or on whose behalf it was done. */
    personId: text('person_id'),
    /** The OAuth client it came through; null for the web pages and the organization's own work. */
    clientId: text('client_id'),
    agentId: text('agent_id'),
    capabilityId: text('capability_id'),
    operationId: text('operation_id'),
    /** The record it concerns (a memory item, a task, a decision, …), when there is one. */
    subject: text('subject'),
    details: jsonb('details').$type<JsonObject>().notNull(),
    /** The W3C trace context the causing request carried. */
    traceparent: text('traceparent'),
    position: bigint('position', { mode: 'number' }),
    prevHash: text('prev_hash'),
    hash: text('hash'),
  },
  (table) => [
    uniqueIndex('org_activity_position_idx').on(table.position),
    index('org_activity_unsealed_idx').on(table.seq).where(sql`hash IS NULL`),
    index('org_activity_space_idx').on(table.spaceId, table.seq),
    index('org_activity_person_idx').on(table.personId, table.seq),
    index('org_activity_agent_idx').on(table.agentId, table.seq),
    index('org_activity_kind_idx').on(table.kind, table.seq),
    index('org_activity_capability_idx').on(table.capabilityId, table.seq),
    index('org_activity_operation_idx').on(table.operationId, table.seq),
    index('org_activity_at_idx').on(table.at),
    // The entries of one trace: the trace id of `00-<trace id>-<parent id>-<flags>`.
    index('org_activity_trace_idx').on(sql`substr(${table.traceparent}, 4, 32)`, table.seq),
  ],
);

// ---------------------------------------------------------------------------------------------------------
// Telling people and other tools (DESIGN 4.8, events/ and notifications/)
// ---------------------------------------------------------------------------------------------------------

/**
 * An endpoint that receives the organization's events as Standard Webhooks: declared in the organization file
 * (by `key`) or made on the console. `events` lists the event types it takes; empty means all of them.
 */
export const eventEndpoints = pgTable('event_endpoints', {
  id: text('id').primaryKey(),
  key: text('key').notNull().unique(),
  url: text('url').notNull(),
  events: jsonb('events').$type<string[]>().notNull().default([]),
  /** Environment variable holding the `whsec_` signing secret; or else `signing_secret`. */
  secretEnv: text('secret_env'),
  signingSecret: signingSecret(),
  enabled: boolean('enabled').notNull().default(true),
  managedBy: managedBy(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * One event sent to one endpoint: `event_id` is the `webhook-id` of every attempt (one per event), so a receiver
 * drops repeats; the body is fixed when the event happens.
 */
export const eventDeliveries = pgTable(
  'event_deliveries',
  {
    eventId: text('event_id').notNull(),
    endpointId: text('endpoint_id').notNull().references(() => eventEndpoints.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    body: jsonb('body').$type<JsonObject>().notNull(),
    status: text('status', { enum: ['pending', 'delivered', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    firstAttemptAt: when('first_attempt_at'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [primaryKey({ columns: [table.eventId, table.endpointId] }), index('event_deliveries_endpoint_idx').on(table.endpointId, table.createdAt)],
);

/**
 * One email to one person about one thing (a decision, a reminder, an escalation, a task question). The unique
 * (person, subject, reason) is what makes it "never twice": a retried job finds the row it already sent.
 */
export const notifications = pgTable(
  'notifications',
  {
    id: text('id').primaryKey(),
    personId: text('person_id').notNull().references(() => people.id, { onDelete: 'cascade' }),
    /** The decision or task question it is about. */
    subject: text('subject').notNull(),
    reason: text('reason', { enum: ['decision', 'reminder', 'escalation', 'task_question'] }).notNull(),
    channel: text('channel', { enum: ['email'] }).notNull().default('email'),
    status: text('status', { enum: ['pending', 'sent', 'failed'] }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    sentAt: when('sent_at'),
    createdAt: createdAt(),
  },
  (table) => [uniqueIndex('notifications_once_idx').on(table.personId, table.subject, table.reason), index('notifications_subject_idx').on(table.subject)],
);
