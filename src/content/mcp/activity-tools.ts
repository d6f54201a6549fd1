/** get_activity_log (spec 4.3), over content/activity.ts: the newest changes first (DESIGN 3). */
import { listActivity } from '../activity.js';
import { READ, defineTool } from './tools.js';

export const activityTools = [
  defineTool({
    name: 'get_activity_log',
    description:
      'The content change log, newest first: who (actor_id, actor_type) did what (action) to which item (resource, ' +
      'resource_id = slug), with the changed fields as {field: [before, after]}. Optionally for one resource type.',
    annotations: READ,
    run: (query, { ctx }) => listActivity(ctx.db, query, 'newest_first'),
  }),
];
