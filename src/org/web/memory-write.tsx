/**
 * GET/POST /memory/new and /memory/:id/new-version: a person records company memory from the console, as their
 * client does with `record_memory` — the same domain function and the same input rules, with the person as its
 * provenance and no client. An item is never edited: a change is a new version that supersedes the current one
 * (memory/records.ts). A person writes only in their own spaces, an owner or admin too (the spaces MCP tools place
 * work in); a space or item outside them is answered as unknown, with nothing written.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { isAppError } from '../../platform/errors.js';
import { writeOrg } from '../changes.js';
import { MEMORY_KINDS, recordMemoryInput, type MemoryItem } from '../memory/records.js';
import { getMemory } from '../memory/search.js';
import { recordMemory } from '../memory/write.js';
import { listSpacesOfPerson, type Space } from '../spaces/records.js';
import { anyoneSignedIn, consolePage, consolePost, type ConsolePage, type Viewer } from './console.js';
import { FormProblems, handleForm } from './manage.js';
import { formField, type WebContext } from './respond.js';
import { notFound, optionalField, spaceNamer, SpaceSelect } from './parts.js';
import { id as fieldId } from '../fields.js';

/** The form's fields as people read them, for its problems (the paths of `recordMemoryInput`). */
const LABELS: Record<string, string> = {
  kind: 'Kind',
  space_id: 'Space',
  title: 'Title',
  body: 'Text',
  tags: 'Tags',
  valid_from: 'Holds from',
  valid_until: 'Holds through',
};

const DAY_MS = 86_400_000;
const day = z
  .string()
  .trim()
  .regex(/^(\d{4}-\d{2}-\d{2})?$/, 'must be a date such as 2026-12-31')
  .refine((value) => value === '' || !Number.isNaN(Date.parse(`${value}T00:00:00Z`)), 'is not a date')
  .default('');

/**
 * What the form sends, as `record_memory`'s input: tags comma-separated, validity as whole UTC days (from the start
 * of the first, through the end of the last: `valid_until` is exclusive). The result is checked by the tool's own
 * schema, so the console and MCP accept exactly the same items.
 */
const memoryForm = z
  .object({
    kind: z.string().default(''),
    space_id: z.string().default(''),
    title: z.string().default(''),
    body: z.string().default(''),
    tags: z.string().max(2000, 'are longer than 2000 characters').default(''),
    valid_from: day,
    valid_until: day,
  })
  .transform((form): Record<keyof typeof LABELS, unknown> => ({
    kind: form.kind,
    space_id: form.space_id,
    title: form.title,
    body: form.body,
    tags: form.tags.split(',').map((tag) => tag.trim()).filter(Boolean),
    valid_from: form.valid_from ? `${form.valid_from}T00:00:00.000Z` : undefined,
    valid_until: form.valid_until ? new Date(Date.parse(`${form.valid_until}T00:00:00Z`) + DAY_MS).toISOString() : undefined,
  }))
  .pipe(recordMemoryInput);

/** The form's values as strings: what the person sent, or the version being replaced. */
type Values = Partial<Record<keyof typeof LABELS, string>>;

function valuesFrom(body: unknown): Values {
  return Object.fromEntries(Object.keys(LABELS).map((field) => [field, formField(body, field) ?? '']));
}

function valuesOf(item: MemoryItem): Values {
  return {
    kind: item.kind,
    space_id: item.space_id,
    title: item.title,
    body: item.body,
    tags: item.tags.join(', '),
    valid_from: item.valid_from?.slice(0, 10) ?? '',
    // The last day the item holds: the day before its exclusive end when that end is a midnight.
    valid_until: item.valid_until ? new Date(Date.parse(item.valid_until) - 1).toISOString().slice(0, 10) : '',
  };
}

const newQuery = z.object({ space: optionalField(fieldId()) });
const noQuery = z.object({});


export function registerMemoryWriting(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;

  /** The current version the viewer may replace, or nothing (unknown, outside their spaces, or replaced already). */
  async function replaceable(viewer: Viewer, id: string) {
    if (id.length > 200) return undefined;
    try {
      const item = await getMemory(db, id, { spaceIds: viewer.scope.spaceIds });
      return item.status === 'current' ? item : undefined;
    } catch (error) {
      if (isAppError(error) && error.status === 404) return undefined;
      throw error;
    }
  }

  async function formPage(input: { viewer: Viewer; values: Values; problems?: string[]; replacing?: MemoryItem }): Promise<ConsolePage> {
    const spaces = await listSpacesOfPerson(db, input.viewer.person.id);
    const title = input.replacing ? `New version of “${input.replacing.title}”` : 'Record memory';
    return { title, body: <MemoryForm {...input} csrf={input.viewer.csrf} title={title} spaces={spaces} /> };
  }

  const save = (viewer: Viewer, input: z.output<typeof memoryForm>) =>
    writeOrg(web.ctx, [], (tx, changed) =>
      recordMemory(tx, input, { type: 'person', personId: viewer.person.id, clientId: null }, { spaceIds: viewer.scope.spaceIds }, changed),
    );

  consolePage(app, web, '/memory/new', newQuery, async (viewer, { query }) =>
    formPage({ viewer, values: { kind: 'fact', space_id: query.space ?? viewer.scope.spaceIds[0] ?? '' } }),
  );

  consolePost(app, web, '/memory/new', anyoneSignedIn, async (viewer, { body, reply }) =>
    handleForm({ schema: memoryForm, body, labels: LABELS, reply, again: (problems) => formPage({ viewer, values: valuesFrom(body), problems }) }, async (input) => {
      const item = await save(viewer, input);
      return reply.redirect(`/memory/${item.id}`, 303);
    }),
  );

  consolePage<typeof noQuery, { id: string }>(app, web, '/memory/:id/new-version', noQuery, async (viewer, { params, reply }) => {
    const item = await replaceable(viewer, params.id);
    if (!item) return notFound(reply, 'current memory item in your spaces', { href: '/memory', name: 'memory' });
    return formPage({ viewer, values: valuesOf(item), replacing: item });
  });

  consolePost<{ id: string }>(app, web, '/memory/:id/new-version', anyoneSignedIn, async (viewer, { body, params, reply }) => {
    const item = await replaceable(viewer, params.id);
    if (!item) return notFound(reply, 'current memory item in your spaces', { href: '/memory', name: 'memory' });
    // The new version stays in its item's space and replaces exactly the version this page showed.
    const fields = { ...(body && typeof body === 'object' ? body : {}), space_id: item.space_id };
    return handleForm(
      { schema: memoryForm, body: fields, labels: LABELS, reply, again: (problems) => formPage({ viewer, values: valuesFrom(fields), problems, replacing: item }) },
      async (input) => {
        const version = await save(viewer, { ...input, supersedes: item.id });
        return reply.redirect(`/memory/${version.id}`, 303);
      },
    );
  });
}

function MemoryForm({
  title,
  csrf,
  values,
  problems = [],
  replacing,
  spaces,
}: {
  title: string;
  csrf: string;
  values: Values;
  problems?: string[];
  replacing?: MemoryItem;
  spaces: Space[];
}): VNode {
  const action = replacing ? `/memory/${replacing.id}/new-version` : '/memory/new';
  return (
    <>
      <p>
        <a href={replacing ? `/memory/${replacing.id}` : '/memory'}>{replacing ? replacing.title : 'Memory'}</a>
      </p>
      <h1>{title}</h1>
      {replacing ? (
        <p>The current version keeps its text and provenance in the item's history; this one replaces it in search and in the assistant's answers.</p>
      ) : null}
      {spaces.length === 0 ? (
        <p role="alert">You are in no space yet, so there is nowhere to record memory. An owner or admin can add you to one on the People page.</p>
      ) : (
        <form method="post" action={action}>
          <FormProblems problems={problems} />
          <input type="hidden" name="csrf" value={csrf} />
          <label for="memory-kind">Kind</label>
          <select id="memory-kind" name="kind" aria-describedby="memory-kind-help">
            {MEMORY_KINDS.map((kind) => (
              <option key={kind} value={kind} selected={values.kind === kind}>
                {kind}
              </option>
            ))}
          </select>
          <small id="memory-kind-help">A fact is something true, a decision something decided, an instruction a standing instruction to follow.</small>
          {replacing ? (
            <p>Space: {spaceNamer(spaces)(replacing.space_id)} (a new version stays in its item's space)</p>
          ) : (
            <>
              <label for="memory-space">Space</label>
              <SpaceSelect id="memory-space" spaces={spaces} value={values.space_id} describedBy="memory-space-help" />
              <small id="memory-space-help">Who may read it: the people of that space and the agents working for them.</small>
            </>
          )}
          <label for="memory-title">Title</label>
          <input id="memory-title" name="title" value={values.title ?? ''} required maxLength={200} />
          <label for="memory-body">Text</label>
          <textarea id="memory-body" name="body" rows={8} required maxLength={20000}>
            {values.body ?? ''}
          </textarea>
          <label for="memory-tags">Tags</label>
          <input id="memory-tags" name="tags" value={values.tags ?? ''} maxLength={2000} aria-describedby="memory-tags-help" />
          <small id="memory-tags-help">Separated by commas, at most 20; compared in lower case.</small>
          <fieldset>
            <legend>When it holds (optional, UTC days)</legend>
            <label for="memory-valid-from">Holds from</label>
            <input id="memory-valid-from" name="valid_from" type="date" value={values.valid_from ?? ''} />
            <label for="memory-valid-until">Holds through</label>
            <input id="memory-valid-until" name="valid_until" type="date" value={values.valid_until ?? ''} />
          </fieldset>
          <div class="actions">
            <button type="submit">{replacing ? 'Record the new version' : 'Record'}</button>
          </div>
        </form>
      )}
    </>
  );
}
