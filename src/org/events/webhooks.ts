/**
 * The event webhook channel (DESIGN 4.8): each announced event goes to every enabled endpoint that takes its type,
 * as a Standard Webhooks POST through the same signed, bounded delivery as agents' work (delivery/webhook.ts).
 *
 * Handing an event over stores one `event_deliveries` row per endpoint (keyed by event and endpoint, so the announce
 * job running twice stores and sends nothing more) and queues its first attempt in the same transaction. The
 * `webhook-id` of every attempt, to every endpoint, is the event's id: a receiver drops repeats by it.
 *
 * Each attempt is counted and the next one queued behind its timeout before anything is sent, as agents' deliveries
 * are: a process killed mid-attempt leaves that job, and another process tries again. A 2xx delivers it; a network
 * error, a timeout, an answer over 1 MiB, 408, 429 or 5xx is tried again after the backoff (1 s, 2 s, 4 s, … at most
 * 10 minutes) or when `Retry-After` says, for the retry window (EVENT_DELIVERY_WINDOW_SECONDS, 24 hours by default,
 * from the first attempt); then, like a redirect or any other 4xx at once, the delivery fails for good, with its last
 * error, and that failure (only that) is written to the activity log.
 */
import { and, eq, sql } from 'drizzle-orm';
import { queryRows } from '../../platform/database.js';
import { cancelJob, jobKind, type JobInfo } from '../../platform/jobs.js';
import { jobs } from '../../platform/schema.js';
import { toIso } from '../../platform/time.js';
import { recordActivity } from '../activity/records.js';
import type { OrgContext } from '../context.js';
import { DEFAULT_TIMEOUT_SECONDS } from '../delivery/deliveries.js';
import { deliverSigned, nextAttemptAt, type AttemptOutcome } from '../delivery/webhook.js';
import { eventDeliveries, eventEndpoints } from '../schema.js';
import type { EventChannel } from './announce.js';
import { eventBody } from './bodies.js';
import { orgErrors } from '../errors.js';
import { newId } from '../ids.js';
import { assertManagesEndpoints, endpointSecret, hostOf, takesEvent, type EndpointEditor, type EndpointRow } from './endpoints.js';

const DEFAULT_WINDOW_SECONDS = 86_400;
const MAX_BACKOFF_SECONDS = 600;

const deliverEvent = jobKind<{ event_id: string; endpoint_id: string }>('org.event-delivery');

/** The one pending attempt of a delivery is queued under this key. */
const attemptKey = (eventId: string, endpointId: string) => `${deliverEvent.kind}:${eventId}:${endpointId}`;

type DeliveryRow = typeof eventDeliveries.$inferSelect;

/** Hands each event to the endpoints that take it; builds its body only when one does. */
export function webhookChannel(ctx: OrgContext): EventChannel {
  return async (event) => {
    const takers = await ctx.db.select({ id: eventEndpoints.id }).from(eventEndpoints).where(takesEvent(event.type));
    if (takers.length === 0) return;
    const body = await eventBody(ctx.db, event, ctx.config.publicUrl);
    if (!body) return;
    await ctx.db.transaction(async (tx) => {
      const stored = await queryRows<{ endpoint_id: string }>(
        tx,
        sql`INSERT INTO ${eventDeliveries} (event_id, endpoint_id, type, body)
          SELECT ${event.event_id}, id, ${event.type}, ${JSON.stringify(body)}::jsonb FROM ${eventEndpoints} WHERE ${takesEvent(event.type)}
          ON CONFLICT DO NOTHING RETURNING endpoint_id`,
      );
      for (const { endpoint_id } of stored) {
        await deliverEvent.enqueue(tx, { event_id: event.event_id, endpoint_id }, { key: attemptKey(event.event_id, endpoint_id) });
      }
    });
  };
}

/**
 * "Send a test event" on the console: an `endpoint.test` event for this endpoint alone, delivered as any other (signed,
 * retried, listed with its deliveries), so whoever sets up a receiver sees one arrive and verify.
 */
export async function sendTestEvent(ctx: OrgContext, endpointId: string, by: EndpointEditor): Promise<void> {
  assertManagesEndpoints(by);
  const [endpoint] = await ctx.db.select({ key: eventEndpoints.key }).from(eventEndpoints).where(eq(eventEndpoints.id, endpointId));
  if (!endpoint) throw orgErrors.notFound('event endpoint');
  const eventId = newId('evt');
  const body = { type: 'endpoint.test', timestamp: new Date().toISOString(), data: { endpoint: { key: endpoint.key }, url: `${ctx.config.publicUrl}/events/${endpointId}` } };
  await ctx.db.transaction(async (tx) => {
    await tx.insert(eventDeliveries).values({ eventId, endpointId, type: body.type, body });
    await deliverEvent.enqueue(tx, { event_id: eventId, endpoint_id: endpointId }, { key: attemptKey(eventId, endpointId) });
  });
}

/** The queue handler of event delivery attempts. */
export function eventDeliveryJobHandlers(ctx: OrgContext) {
  return deliverEvent.handle(async ({ event_id, endpoint_id }, job) => attemptEventDelivery(ctx, event_id, endpoint_id, job));
}

/** One attempt, and what follows from it. Safe to run twice: a settled delivery, or an attempt counted already, is left alone. */
async function attemptEventDelivery(ctx: OrgContext, eventId: string, endpointId: string, job: JobInfo): Promise<void> {
  const [found] = await ctx.db
    .select({ delivery: eventDeliveries, endpoint: eventEndpoints })
    .from(eventDeliveries)
    .innerJoin(eventEndpoints, eq(eventEndpoints.id, eventDeliveries.endpointId))
    .where(and(eq(eventDeliveries.eventId, eventId), eq(eventDeliveries.endpointId, endpointId)));
  if (!found || found.delivery.status !== 'pending') return;
  const { delivery, endpoint } = found;
  const windowSeconds = ctx.config.events?.windowSeconds ?? DEFAULT_WINDOW_SECONDS;
  const timeoutSeconds = ctx.config.delivery?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const deadline = delivery.firstAttemptAt ? Date.parse(toIso(delivery.firstAttemptAt)) + windowSeconds * 1000 : Infinity;
  if (deadline <= Date.now()) {
    const tries = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`;
    return giveUp(ctx, delivery, endpoint, `${delivery.lastError ?? 'the endpoint could not be reached'}; gave up after ${tries} in ${windowSeconds} s`);
  }
  if (!endpoint.enabled) return giveUp(ctx, delivery, endpoint, 'the endpoint was disabled before the event reached it');
  const secret = endpointSecret(endpoint, ctx.config.resolveSecret);
  if (!secret) {
    return giveUp(ctx, delivery, endpoint, `its signing secret${endpoint.secretEnv ? ` (${endpoint.secretEnv})` : ''} is not set to a whsec_ value on the server`);
  }

  const counted = await ctx.db.transaction(async (tx) => {
    // Compare-and-set on the count this run read: a second claim of the same attempt counts and sends nothing.
    const [row] = await tx
      .update(eventDeliveries)
      .set({ attempts: sql`${eventDeliveries.attempts} + 1`, firstAttemptAt: sql`coalesce(${eventDeliveries.firstAttemptAt}, now())`, updatedAt: sql`now()` })
      .where(and(eq(eventDeliveries.eventId, eventId), eq(eventDeliveries.endpointId, endpointId), eq(eventDeliveries.attempts, delivery.attempts), eq(eventDeliveries.status, 'pending')))
      .returning();
    if (!row) return undefined;
    // The running job holds the key; the next attempt, queued behind this one's timeout, takes it over.
    await tx.update(jobs).set({ key: null }).where(eq(jobs.id, job.id));
    await deliverEvent.enqueue(tx, { event_id: eventId, endpoint_id: endpointId }, { key: attemptKey(eventId, endpointId), runAt: new Date(Date.now() + (timeoutSeconds + 1) * 1000) });
    return row;
  });
  if (!counted) return;

  const body = counted.body as unknown as { type: string; timestamp: string; data: unknown };
  const outcome = await deliverSigned({
    receiver: 'the endpoint',
    url: endpoint.url,
    secret,
    webhookId: eventId,
    // The stored JSON's keys come back in jsonb's order; the envelope is sent in the convention's.
    body: { type: body.type, timestamp: body.timestamp, data: body.data },
    timeoutMs: timeoutSeconds * 1000,
  });
  await applyAttempt(ctx, counted, endpoint, outcome, windowSeconds);
}

async function applyAttempt(ctx: OrgContext, delivery: DeliveryRow, endpoint: EndpointRow, outcome: AttemptOutcome, windowSeconds: number): Promise<void> {
  switch (outcome.kind) {
    case 'answered':
    case 'accepted':
      return settle(ctx, delivery, 'delivered', { status: outcome.status });
    case 'refused':
      return giveUp(ctx, delivery, endpoint, outcome.reason, outcome.status);
    case 'retry': {
      const deadline = Date.parse(toIso(delivery.firstAttemptAt!)) + windowSeconds * 1000;
      const next = nextAttemptAt(outcome, delivery.attempts, { deadline, maxBackoffSeconds: MAX_BACKOFF_SECONDS });
      ctx.log.info({ event: delivery.eventId, endpoint: endpoint.key, attempts: delivery.attempts, reason: outcome.reason }, 'event delivery attempt failed; retrying');
      await ctx.db.transaction(async (tx) => {
        await tx
          .update(eventDeliveries)
          .set({ lastStatus: outcome.status ?? null, lastError: outcome.reason, updatedAt: sql`now()` })
          .where(and(eq(eventDeliveries.eventId, delivery.eventId), eq(eventDeliveries.endpointId, delivery.endpointId)));
        await deliverEvent.enqueue(tx, { event_id: delivery.eventId, endpoint_id: delivery.endpointId }, { key: attemptKey(delivery.eventId, delivery.endpointId), runAt: next });
      });
      return;
    }
  }
}

/** The delivery failed for good: marked so with its last error, and written to the activity log (the one entry a delivery makes). */
async function giveUp(ctx: OrgContext, delivery: DeliveryRow, endpoint: EndpointRow, reason: string, status?: number): Promise<void> {
  ctx.log.warn({ event: delivery.eventId, endpoint: endpoint.key, reason }, 'event delivery failed');
  await settle(ctx, delivery, 'failed', { status, error: reason }, {
    kind: 'endpoint.delivery_failed',
    summary: `the ${delivery.type} event could not be delivered to the endpoint ${endpoint.key} (${hostOf(endpoint.url)}): ${reason}`,
    subject: endpoint.id,
    details: { event_id: delivery.eventId, type: delivery.type, endpoint: endpoint.key, attempts: delivery.attempts, http_status: status ?? null, error: reason },
  });
}

/** Settles a pending delivery and drops its queued attempt, with the failure's entry when there is one. */
async function settle(
  ctx: OrgContext,
  delivery: DeliveryRow,
  status: 'delivered' | 'failed',
  last: { status?: number; error?: string },
  failed?: Parameters<typeof recordActivity>[1],
): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const [settled] = await tx
      .update(eventDeliveries)
      .set({ status, lastStatus: last.status ?? sql`${eventDeliveries.lastStatus}`, lastError: last.error ?? sql`${eventDeliveries.lastError}`, updatedAt: sql`now()` })
      .where(and(eq(eventDeliveries.eventId, delivery.eventId), eq(eventDeliveries.endpointId, delivery.endpointId), eq(eventDeliveries.status, 'pending')))
      .returning({ eventId: eventDeliveries.eventId });
    await cancelJob(tx, attemptKey(delivery.eventId, delivery.endpointId));
    if (settled && failed) await recordActivity(tx, failed);
  });
}
