/**
 * The authorization server's events as activity entries (DESIGN 4.6: "consents and disconnections"). The auth
 * service knows nothing of the organization: it is handed this recorder (service.ts) and calls it in the
 * transaction of the consent or the disconnection.
 */
import type { AuthEvent } from '../../auth/index.js';
import type { Queryable } from '../../platform/database.js';
import { recordActivity, type NewActivity } from './records.js';

export function recordAuthActivity(db: Queryable, event: AuthEvent): Promise<void> {
  return recordActivity(db, toActivity(event));
}

function toActivity(event: AuthEvent): NewActivity {
  const who = { personId: event.personId, clientId: event.clientId, subject: event.clientId };
  switch (event.kind) {
    case 'consent.granted':
      return {
        ...who,
        kind: 'consent.granted',
        summary: `allowed the client ${event.clientId}: ${event.scopes.join(' ') || 'no scopes'}`,
        details: { scopes: event.scopes, requested: event.requested },
      };
    case 'consent.denied':
      return { ...who, kind: 'consent.denied', summary: `denied the client ${event.clientId}`, details: { requested: event.requested } };
    case 'client.disconnected':
      return { ...who, kind: 'client.disconnected', summary: `disconnected the client ${event.clientId}`, details: { grants_revoked: event.grants } };
  }
}
