import { PUBLISH_POST_JOB, publishPostJob } from './blog/publish-job.js';
import type { ContentJobHandlers } from './context.js';
import { CONTENT_HOUSEKEEPING_JOB, contentHousekeepingJob } from './housekeeping.js';
import { revalidateJob } from './revalidation.js';

/** The durable jobs of the content service, by kind. */
export const contentJobHandlers: ContentJobHandlers = {
  revalidate: revalidateJob,
  [PUBLISH_POST_JOB]: publishPostJob,
  [CONTENT_HOUSEKEEPING_JOB]: contentHousekeepingJob,
};
