/**
 * Roadmap routes of spec 4.4 (auth per 5.2): thin adapters over content/roadmap/ and content/votes.ts.
 * Reads are public but see public items only, unless the request carries the secret; writes need the
 * secret and an actor; votes need neither.
 */
import { z } from 'zod';
import type { HttpServer } from '../../platform/http.js';
import { actorFields, takeActor } from '../actor.js';
import type { ContentContext } from '../context.js';
import { getItem, itemPage, listItems } from '../roadmap/queries.js';
import { roadmapItem } from '../roadmap/records.js';
import { bulkUpdateInput, bulkUpdateItems, createItem, deleteItem, shipItem, shipItemInput, updateItem } from '../roadmap/writes.js';
import { createItemInput, listItemsQuery, updateItemInput } from '../contract.js';
import { checkVoteRate } from '../vote-limit.js';
import { castVote, voteInput, withdrawVote } from '../votes.js';
import { isAuthenticated, SECRET_REQUIRED } from './auth.js';

const tags = ['roadmap'];
const params = z.object({ slug: z.string().min(1).max(200) });
const actorBody = z.strictObject(actorFields);

const voteResult = z.object({ votes: z.number().int(), voted: z.boolean() });

export function registerRoadmapRoutes(app: HttpServer, ctx: ContentContext): void {
  app.get(
    '/roadmap',
    {
      config: { publicCache: true },
      schema: { tags, summary: 'List public roadmap items, with counts per status', querystring: listItemsQuery, response: { 200: itemPage } },
    },
    async (request) => listItems(ctx, request.query),
  );

  // A static route: it wins over /roadmap/:slug, and "all" is a reserved slug.
  app.get(
    '/roadmap/all',
    {
      config: SECRET_REQUIRED,
      schema: { tags, summary: 'List every roadmap item, non-public ones too (auth required)', querystring: listItemsQuery, response: { 200: itemPage } },
    },
    async (request) => listItems(ctx, request.query, { includeHidden: true }),
  );

  app.get(
    '/roadmap/:slug',
    {
      config: { publicCache: true },
      schema: { tags, summary: 'Get one item; a non-public item is found only with the secret', params, response: { 200: roadmapItem } },
    },
    async (request) => getItem(ctx, request.params.slug, { includeHidden: isAuthenticated(ctx, request) }),
  );

  app.post(
    '/roadmap',
    {
      config: SECRET_REQUIRED,
      schema: { tags, summary: 'Create an item', body: createItemInput.extend(actorFields), response: { 201: roadmapItem } },
    },
    async (request, reply) => {
      const [actor, input] = takeActor(request.body);
      return reply.code(201).send(await createItem(ctx, input, actor));
    },
  );

  app.post(
    '/roadmap/bulk',
    {
      config: SECRET_REQUIRED,
      schema: {
        tags,
        summary: 'Update status, quarter or priority of 1 to 100 items at once; all or nothing',
        body: bulkUpdateInput.extend(actorFields),
        response: { 200: z.object({ items: z.array(roadmapItem) }) },
      },
    },
    async (request) => {
      const [actor, input] = takeActor(request.body);
      return bulkUpdateItems(ctx, input, actor);
    },
  );

  app.patch(
    '/roadmap/:slug',
    {
      config: SECRET_REQUIRED,
      schema: { tags, summary: 'Update an item; any status may move to any other', params, body: updateItemInput.extend(actorFields), response: { 200: roadmapItem } },
    },
    async (request) => {
      const [actor, input] = takeActor(request.body);
      return updateItem(ctx, request.params.slug, input, actor);
    },
  );

  app.post(
    '/roadmap/:slug/ship',
    {
      config: SECRET_REQUIRED,
      schema: { tags, summary: 'Mark an item shipped, recording shipped_at', params, body: shipItemInput.extend(actorFields), response: { 200: roadmapItem } },
    },
    async (request) => {
      const [actor, input] = takeActor(request.body);
      return shipItem(ctx, request.params.slug, input, actor);
    },
  );

  app.delete(
    '/roadmap/:slug',
    {
      config: SECRET_REQUIRED,
      schema: {
        tags,
        summary: 'Delete an item and its votes; a shipped item is refused',
        params,
        body: actorBody,
        response: { 200: z.object({ slug: z.string(), deleted: z.literal(true) }) },
      },
    },
    async (request) => deleteItem(ctx, request.params.slug, request.body),
  );

  // Spec 5.2: voting needs no secret and no actor.
  app.post(
    '/roadmap/:slug/vote',
    {
      preHandler: (request, reply) => checkVoteRate(ctx, request, reply),
      schema: { tags, summary: 'Vote for a public item; a repeated vote is ignored', params, body: voteInput, response: { 200: voteResult } },
    },
    async (request) => castVote(ctx, request.params.slug, request.body),
  );

  app.delete(
    '/roadmap/:slug/vote',
    {
      preHandler: (request, reply) => checkVoteRate(ctx, request, reply),
      schema: { tags, summary: 'Withdraw a vote; withdrawing twice is ignored', params, body: voteInput, response: { 200: voteResult } },
    },
    async (request) => withdrawVote(ctx, request.params.slug, request.body),
  );
}
