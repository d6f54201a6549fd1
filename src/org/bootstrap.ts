/**
 * What the org service does on every start before it answers (DESIGN sections 1 and 4.2):
 *
 * - applies the organization file when `ATRIUM_ORG_FILE` is set;
 * - makes sure the built-in `assistant` agent exists;
 * - creates the owner: `ATRIUM_ADMIN_EMAIL` / `ATRIUM_ADMIN_PASSWORD` when set and that person does not
 *   exist yet; otherwise, when the organization has no owner at all, `admin@example.com` with a generated
 *   password kept in the data dir (owner-only). The password itself is never logged: the log names the file,
 *   on every start for as long as the owner's password is still that one (checked against the stored hash);
 *   once the password was changed the file no longer unlocks anything and is removed;
 * - on the very first start without a file, creates the space `General` with the owner in it and, when the
 *   content service runs beside it, the `publish_blog_post` capability (risk high) wired to it.
 *
 * All of it runs in one transaction under the set-up lock, so processes starting together on one
 * PostgreSQL database do it exactly once.
 */
import { rm } from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { OrgConfig } from '../config.js';
import type { Db, Tx } from '../platform/database.js';
import { loadOrCreateSecret, readStoredSecret, storedSecretFile } from '../platform/secrets.js';
import { announceWithoutFeed } from '../platform/changes.js';
import { ensureAssistant } from './agents/records.js';
import { ORG_DIRECTORY } from './changes.js';
import { applyOrgFileIn, ensureOrganization, lockOrgSetup, unsetSecretsInUse, type ApplyReport } from './org-file/apply.js';
import { readOrgFile } from './org-file/schema.js';
import { authenticate, findPersonByEmail, upsertPerson } from './people/records.js';
import { people } from './schema.js';
import { addSpaceMember, upsertSpace } from './spaces/records.js';
import { ensureDefaultPublishCapability } from './capabilities/catalogue.js';

const DEFAULT_OWNER_EMAIL = 'admin@example.com';
/** The data dir's secret holding a generated owner password. */
const GENERATED_PASSWORD = 'admin-password';

export async function bootstrapOrganization(
  db: Db,
  config: OrgConfig,
  log: FastifyBaseLogger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  // Read (and validate) the file before touching the database: a broken file stops the start cleanly.
  const file = config.orgFile ? await readOrgFile(config.orgFile) : undefined;

  const created = await db.transaction(async (tx) => {
    await lockOrgSetup(tx);
    const firstStart = (await ensureOrganization(tx, file?.organization)).created;
    // The configured owner exists before the file is applied, so the file may name them (members,
    // responsible); the default owner is only made after it, when the file declared no owner.
    let owner = config.admin.email ? await ensureOwner(tx, config) : undefined;
    let report: ApplyReport | undefined;
    if (file) report = await applyOrgFileIn(tx, file, env, config.orgFile!);
    owner ??= await ensureOwner(tx, config);
    await ensureAssistant(tx);
    if (firstStart && !file && owner.person) {
      const { space } = await upsertSpace(tx, { key: 'general', name: 'General' });
      await addSpaceMember(tx, space.id, owner.person.id);
    }
    if (firstStart && !file && config.content?.beside) await ensureDefaultPublishCapability(tx);
    // Processes already running keep the directory in memory (read-cache.ts); this one's feed is not open yet.
    await announceWithoutFeed(tx, config.database.schema, [{ kind: ORG_DIRECTORY }]);
    return { report, owner };
  });

  // Every start names each secret_env in use that is not set (the file's own are among them).
  const unsetSecrets = await unsetSecretsInUse(db, env);
  if (created.report) {
    for (const warning of created.report.warnings.filter((warning) => !unsetSecrets.includes(warning))) log.warn({ file: config.orgFile }, warning);
    log.info({ file: config.orgFile, ...summarize(created.report) }, 'organization file applied');
  }
  for (const warning of unsetSecrets) log.warn({}, warning);
  if (created.owner.generated) {
    const { email, file: secretFile } = created.owner.generated;
    // Information, not a warning: generating it is what a first start without ATRIUM_ADMIN_PASSWORD is for.
    log.info({ email, file: secretFile }, `created the owner ${email} with a generated password, kept in ${secretFile}; ${howToChange(config, email)}`);
  } else if (created.owner.person && created.owner.createdNow) {
    log.info({ email: created.owner.person.email }, 'created the owner');
  } else if (created.owner.person) {
    await remindOfGeneratedPassword(db, config, created.owner.person.email, log);
  }
}

/**
 * On a later start: while the owner still signs in with the generated password, says where it is kept; once
 * it was changed, removes the file, which would otherwise only leak an old password.
 */
async function remindOfGeneratedPassword(db: Db, config: OrgConfig, email: string, log: FastifyBaseLogger): Promise<void> {
  const secretFile = storedSecretFile(config.dataDir, GENERATED_PASSWORD);
  const password = await readStoredSecret(config.dataDir, GENERATED_PASSWORD);
  if (password === undefined) return;
  if (await authenticate(db, email, password)) {
    log.warn({ email, file: secretFile }, `the owner ${email} still has the generated password kept in ${secretFile}; ${howToChange(config, email)}`);
  } else {
    await rm(secretFile, { force: true });
    log.info({ email, file: secretFile }, `removed ${secretFile}: the owner's password is no longer the generated one`);
  }
}

/** The two ways to change a password: the account page, and the command (for when nobody can sign in). */
function howToChange(config: OrgConfig, email: string): string {
  return `change it after signing in on ${config.publicUrl}/account, or with \`npx atrium people set-password ${email}\` (the new password on standard input)`;
}

interface OwnerOutcome {
  person?: { id: string; email: string };
  createdNow: boolean;
  generated?: { email: string; password: string; file: string };
}

async function ensureOwner(tx: Tx, config: OrgConfig): Promise<OwnerOutcome> {
  const email = config.admin.email;
  if (email) {
    const existing = await findPersonByEmail(tx, email);
    if (existing) return { person: existing, createdNow: false };
    return createOwner(tx, config, email, config.admin.password);
  }
  const [owner] = await tx.select({ id: people.id, email: people.email }).from(people).where(eq(people.role, 'owner')).limit(1);
  if (owner) return { person: owner, createdNow: false };
  return createOwner(tx, config, DEFAULT_OWNER_EMAIL, config.admin.password);
}

async function createOwner(
  tx: Tx,
  config: OrgConfig,
  email: string,
  configuredPassword: string | undefined,
): Promise<OwnerOutcome> {
  let password = configuredPassword;
  let generated: OwnerOutcome['generated'];
  if (!password) {
    const secret = await loadOrCreateSecret(config.dataDir, GENERATED_PASSWORD);
    password = secret.value;
    generated = { email, password, file: secret.file };
  }
  const { person } = await upsertPerson(tx, { email, name: 'Owner', role: 'owner', password });
  return { person, createdNow: true, generated };
}

function summarize(report: ApplyReport): Record<string, unknown> {
  const { warnings: _warnings, ...counts } = report;
  return counts;
}
