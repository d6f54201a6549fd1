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
  // Named as the inbox names a client, its id beside the name it gave itself (unless it gave none).
  const client = event.clientName === event.clientId ? `the client ${event.clientId}` : `the client ${event.clientName} (client id ${event.clientId})`;
  switch (event.kind) {
    case 'consent.granted':
      return {
        ...who,
        kind: 'consent.granted',
        summary: `allowed ${client}: ${event.scopes.join(' ') || 'no scopes'}`,
        details: { scopes: event.scopes, requested: event.requested },
      };
    case 'consent.denied':
      return { ...who, kind: 'consent.denied', summary: `denied ${client}`, details: { requested: event.requested } };
    case 'client.disconnected':
      return { ...who, kind: 'client.disconnected', summary: `disconnected ${client}`, details: { grants_revoked: event.grants } };
  }
}
