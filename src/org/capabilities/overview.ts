/**
 * Capabilities as the console shows them (DESIGN 4.6): risk, cost, whether enabled, and the connector's kind
 * and where it goes — for a webhook the URL's host only, never its path, query or secret.
 */
import { asc, eq, gt } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { capabilities } from '../schema.js';
import type { CapabilityRow } from './catalogue.js';

export interface CapabilityOverview {
  id: string;
  key: string;
  name: string;
  description: string;
  risk: CapabilityRow['risk'];
  cost: number;
  enabled: boolean;
  /** `file`: declared in the organization file, changed only there. */
  managedBy: 'file' | 'console';
  connector: { kind: 'webhook'; host: string | null } | { kind: 'content'; action: string };
}

function toOverview(row: CapabilityRow): CapabilityOverview {
  const connector = row.connector;
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    risk: row.risk,
    cost: row.cost,
    enabled: row.enabled,
    managedBy: row.managedBy,
    connector: connector.kind === 'content' ? { kind: 'content', action: connector.action } : { kind: 'webhook', host: hostOf(connector.url) },
  };
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/** By key, keyset-paged: `after` is the last key of the previous page. */
export async function listCapabilityOverviews(db: Queryable, page: { limit: number; after?: string }): Promise<{ rows: CapabilityOverview[]; next: string | null }> {
  const rows = await db
    .select()
    .from(capabilities)
    .where(page.after === undefined ? undefined : gt(capabilities.key, page.after))
    .orderBy(asc(capabilities.key))
    .limit(page.limit + 1);
  const shown = rows.slice(0, page.limit).map(toOverview);
  return { rows: shown, next: rows.length > page.limit ? shown[shown.length - 1].key : null };
}

export async function findCapabilityOverview(db: Queryable, id: string): Promise<CapabilityOverview | undefined> {
  const [row] = await db.select().from(capabilities).where(eq(capabilities.id, id));
  return row ? toOverview(row) : undefined;
}
