/**
 * Changelog routes of spec 4.4 (auth per 5.2): thin adapters that parse, call content/changelog/ and
 * answer. `:identifier` is a slug or a version. Every write needs the bearer secret and carries
 * actor_id/actor_type in its JSON body. The spec shows no REST delete; DELETE /changelog/:identifier is
 * ours, with the drafts-only rule of spec 3.2.
 */
import { z } from 'zod';
import type { HttpServer } from '../../platform/http.js';
import { actorFields, takeActor } from '../actor.js';
import { getEntry, listDraftEntries, listDraftEntriesInput, listPublishedEntries } from '../changelog/queries.js';
import { changelogEntry, entryPage } from '../changelog/records.js';
import { approveEntry, createEntry, deleteEntry, publishEntry, submitEntry, updateEntry } from '../changelog/workflow.js';
import { createEntryInput, listEntriesInput, updateEntryInput } from '../contract.js';
import type { ContentContext } from '../context.js';
import { contentErrors } from '../errors.js';
import { queryBoolean } from '../fields.js';
import { isAuthenticated, SECRET_REQUIRED } from './auth.js';

const tags = ['changelog'];
const params = z.object({ identifier: z.string().min(1).max(200).describe('The entry slug (v1-4-0) or version (v1.4.0)') });
const actorBody = z.strictObject(actorFields);

export function registerChangelogRoutes(app: HttpServer, ctx: ContentContext): void {
  app.get(
    '/changelog',
    {
      config: { publicCache: true },
      schema: { tags, summary: 'List published entries, newest first', querystring: listEntriesInput, response: { 200: entryPage } },
    },
    async (request) => listPublishedEntries(ctx, request.query),
  );

  // Before /changelog/:identifier, so "drafts" is never taken for an identifier.
  app.get(
    '/changelog/drafts',
    {
      config: SECRET_REQUIRED,
      schema: { tags, summary: 'List unpublished entries: draft and review (auth required)', querystring: listDraftEntriesInput, response: { 200: entryPage } },
    },
    async (request) => listDraftEntries(ctx, request.query),
  );

  app.get(
    '/changelog/:identifier',
    {
      config: { publicCache: true },
      schema: {
        tags,
        summary: 'Get one published entry by slug or version; preview=true (auth required) shows any state',
        params,
        querystring: z.strictObject({ preview: queryBoolean.optional() }),
        response: { 200: changelogEntry },
      },
    },
    async (request) => {
      const preview = request.query.preview === true;
      // Spec 5.2: preview mode needs the secret even though the route is otherwise public.
      if (preview && !isAuthenticated(ctx, request)) throw contentErrors.unauthorized();
      return getEntry(ctx, request.params.identifier, { include_drafts: preview });
    },
  );

  app.post(
    '/changelog',
    {
      config: SECRET_REQUIRED,
      schema: { tags, summary: 'Create an entry (draft by default, or published)', body: createEntryInput.extend(actorFields), response: { 201: changelogEntry } },
    },
    async (request, reply) => {
      const [actor, input] = takeActor(request.body);
      return reply.code(201).send(await createEntry(ctx, input, actor));
    },
  );

  app.patch(
    '/changelog/:identifier',
    {
      config: SECRET_REQUIRED,
      schema: {
        tags,
        summary: 'Update an entry; updating a published entry revalidates its pages',
        params,
        body: updateEntryInput.extend(actorFields),
        response: { 200: changelogEntry },
      },
    },
    async (request) => {
      const [actor, input] = takeActor(request.body);
      return updateEntry(ctx, request.params.identifier, input, actor);
    },
  );

  const moves = [
    ['submit', 'Submit a draft for review (422 validation_failed lists every failing field)', submitEntry],
    ['approve', 'Approve an entry in review: it is published', approveEntry],
    ['publish', 'Publish an entry in any state directly', publishEntry],
  ] as const;
  for (const [move, summary, run] of moves) {
    app.post(
      `/changelog/:identifier/${move}`,
      { config: SECRET_REQUIRED, schema: { tags, summary, params, body: actorBody, response: { 200: changelogEntry } } },
      async (request) => run(ctx, request.params.identifier, request.body),
    );
  }

  app.delete(
    '/changelog/:identifier',
    {
      config: SECRET_REQUIRED,
      schema: {
        tags,
        summary: 'Delete a draft entry for good; review and published entries are refused',
        params,
        body: actorBody,
        response: { 200: z.object({ slug: z.string(), version: z.string(), deleted: z.literal(true) }) },
      },
    },
    async (request) => deleteEntry(ctx, request.params.identifier, request.body),
  );
}
