import type { ContentJobHandlers } from './context.js';

/** The durable jobs of the content service, by kind. */
export const contentJobHandlers: ContentJobHandlers = {};
