/**
 * GET /memory and /memory/:id (DESIGN 4.6, issue 19 item 4): company memory as a person reads it. A query runs
 * `searchMemory`, the very search the MCP tool `search_memory` runs, over the viewer's spaces (every space for
 * an owner or admin); without one, the latest current items. An item's page shows every version with its
 * provenance and validity window. An item outside the viewer's spaces is answered exactly as an unknown id.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { id as fieldId, text } from '../fields.js';
import { MEMORY_KINDS, type MemoryItem, type MemoryPage } from '../memory/records.js';
import { getMemory, listRecentMemory, searchMemory } from '../memory/search.js';
import { namesOfClients } from '../agents/records.js';
import { namesOfPeople } from '../people/directory.js';
import type { Space } from '../spaces/records.js';
import { consolePage } from './console.js';
import { theClient } from './format.js';
import { AnySelect, Body, cursorField, optionalField, Pager, pageHref, spaceNamer, Time, visibleSpaces } from './parts.js';
import type { WebContext } from './respond.js';

const PAGE_SIZE = 20;

const memoryQuery = z.object({
  q: optionalField(text().trim().min(1).max(500)),
  space: optionalField(fieldId()),
  kind: optionalField(z.enum(MEMORY_KINDS)),
  cursor: cursorField,
});

const noQuery = z.object({});

export function registerMemoryPages(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;

  consolePage(app, web, '/memory', memoryQuery, async (viewer, { query }) => {
    const spaces = await visibleSpaces(db, viewer.scope);
    const caller = { spaceIds: spaces.map((space) => space.id) };
    const filters = { space_id: query.space, kind: query.kind, cursor: query.cursor };
    const page: MemoryPage = query.q
      ? await searchMemory(db, { query: query.q, ...filters, limit: PAGE_SIZE }, caller)
      : await listRecentMemory(db, { ...filters, limit: PAGE_SIZE }, caller);
    const names = await provenanceNames(web, page.items);
    return {
      title: 'Memory',
      body: (
        <>
          <h1>Memory</h1>
          {viewer.scope.spaceIds.length ? (
            <p>
              <a href={pageHref('/memory/new', { space: query.space !== undefined && viewer.scope.spaceIds.includes(query.space) ? query.space : undefined })} role="button">
                Record memory
              </a>
            </p>
          ) : null}
          <MemoryFilters spaces={spaces} query={query} />
          <h2>{query.q ? `Results for “${query.q}”` : 'Latest items'}</h2>
          {page.items.length === 0 ? (
            <p>{query.q ? 'Nothing in memory matches.' : 'Nothing has been recorded yet.'}</p>
          ) : (
            <MemoryTable items={page.items} spaceName={spaceNamer(spaces)} names={names} />
          )}
          <Pager path="/memory" query={{ q: query.q, space: query.space, kind: query.kind }} cursor={query.cursor} next={page.next_cursor} label="Memory" />
        </>
      ),
    };
  });

  consolePage<typeof noQuery, { id: string }>(app, web, '/memory/:id', noQuery, async (viewer, { params }) => {
    const spaces = await visibleSpaces(db, viewer.scope);
    const item = await getMemory(db, params.id, { spaceIds: spaces.map((space) => space.id) });
    const names = await provenanceNames(web, item.history);
    const current = item.history.find((version) => version.status === 'current');
    return {
      title: item.title,
      body: (
        <>
          <p>
            <a href="/memory">Memory</a>
          </p>
          <h1>{item.title}</h1>
          {current && current.id !== item.id ? (
            <p role="note">
              This version was replaced. The current version is <a href={`/memory/${current.id}`}>{current.title}</a>.
            </p>
          ) : null}
          <dl class="facts">
            <dt>Kind</dt>
            <dd>{item.kind}</dd>
            <dt>Space</dt>
            <dd>{spaceNamer(spaces)(item.space_id)}</dd>
            <dt>Status</dt>
            <dd>
              <span class={`badge ${item.status}`}>{item.status}</span>
            </dd>
            <dt>Tags</dt>
            <dd>{item.tags.length ? item.tags.join(', ') : '—'}</dd>
          </dl>
          <Body text={item.body} />
          {item.status === 'current' && viewer.scope.spaceIds.includes(item.space_id) ? (
            <p>
              <a href={`/memory/${item.id}/new-version`} role="button" class="secondary">
                Record a new version
              </a>
            </p>
          ) : null}
          <h2>Versions ({item.history.length})</h2>
          <p class="muted">Newest first. An item is never edited: each change is a new version, and the older ones keep their provenance.</p>
          {item.history.map((version, index) => (
            <Version key={version.id} version={version} number={item.history.length - index} viewed={version.id === item.id} names={names} />
          ))}
        </>
      ),
    };
  });
}

function MemoryFilters({ spaces, query }: { spaces: Space[]; query: z.output<typeof memoryQuery> }): VNode {
  return (
    <form class="filters" method="get" action="/memory" role="search">
      <label>
        Search
        <input type="search" name="q" value={query.q ?? ''} maxLength={500} placeholder="Words, &quot;a phrase&quot;, -exclusion" />
      </label>
      <AnySelect name="space" label="Space" anyLabel="All your spaces" value={query.space} options={spaces.map((space) => ({ value: space.id, label: space.name }))} />
      <AnySelect name="kind" label="Kind" anyLabel="Any kind" value={query.kind} options={MEMORY_KINDS.map((kind) => ({ value: kind, label: kind }))} />
      <button type="submit">Search</button>
    </form>
  );
}

function MemoryTable({ items, spaceName, names }: { items: MemoryItem[]; spaceName: (id: string) => string; names: ProvenanceNames }): VNode {
  return (
    <table class="stack">
      <thead>
        <tr>
          <th scope="col">Item</th>
          <th scope="col">Space</th>
          <th scope="col">Kind and tags</th>
          <th scope="col">Recorded by</th>
          <th scope="col">Recorded</th>
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={item.id}>
            <td data-label="Item">
              <a href={`/memory/${item.id}`}>{item.title}</a>
              <br />
              <small>{excerpt(item.body)}</small>
            </td>
            <td data-label="Space">{spaceName(item.space_id)}</td>
            <td data-label="Kind">
              {item.kind}
              {item.tags.length ? <small> · {item.tags.join(', ')}</small> : null}
            </td>
            <td data-label="Recorded by">
              <RecordedBy item={item} names={names} />
            </td>
            <td data-label="Recorded">
              <Time value={item.provenance.recorded_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Version({ version, number, viewed, names }: { version: MemoryItem; number: number; viewed: boolean; names: ProvenanceNames }): VNode {
  const { provenance } = version;
  return (
    <article aria-labelledby={`version-${version.id}`}>
      <h3 id={`version-${version.id}`}>
        Version {number}: {viewed ? version.title : <a href={`/memory/${version.id}`}>{version.title}</a>} <span class={`badge ${version.status}`}>{version.status}</span>
        {viewed ? <small> (this page)</small> : null}
      </h3>
      <dl class="facts">
        <dt>Recorded</dt>
        <dd>
          <Time value={provenance.recorded_at} />
        </dd>
        <dt>Recorded by</dt>
        <dd>
          <RecordedBy item={version} names={names} />
        </dd>
        <dt>Through client</dt>
        <dd>
          {provenance.client_id ? (
            names.clients.has(provenance.client_id) ? (
              theClient({ id: provenance.client_id, name: names.clients.get(provenance.client_id) ?? null })
            ) : (
              `a client no longer connected (client id ${provenance.client_id})`
            )
          ) : provenance.recorded_by.type === 'person' ? (
            'none: recorded on the web'
          ) : (
            '—'
          )}
        </dd>
        <dt>Operation</dt>
        <dd>{provenance.operation_id ? <a href={`/operations/${provenance.operation_id}`}>{provenance.operation_id}</a> : '—'}</dd>
        <dt>Valid</dt>
        <dd>
          {version.valid_from || version.valid_until ? (
            <>
              from <Time value={version.valid_from} /> until <Time value={version.valid_until} />
            </>
          ) : (
            'always'
          )}
        </dd>
        <dt>Replaced</dt>
        <dd>
          {version.superseded_at ? (
            <>
              <Time value={version.superseded_at} /> by <a href={`/memory/${version.superseded_by}`}>{version.superseded_by}</a>
            </>
          ) : (
            'no: this is the current version'
          )}
        </dd>
      </dl>
      {viewed ? null : (
        <details>
          <summary>Text of version {number}</summary>
          <Body text={version.body} />
        </details>
      )}
    </article>
  );
}

/** Who recorded an item: a person (through a client), or an agent on a person's behalf. */
function RecordedBy({ item, names }: { item: MemoryItem; names: ProvenanceNames }): VNode {
  const { recorded_by: by, on_behalf_of: onBehalfOf } = item.provenance;
  return (
    <>
      {by.name} <small>({by.type})</small>
      {onBehalfOf ? <small> for {names.people.get(onBehalfOf.person_id) ?? onBehalfOf.person_id}</small> : null}
    </>
  );
}

function excerpt(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}

/** The names provenance refers to by id: the people agents worked for, and the clients items came through. */
interface ProvenanceNames {
  people: Map<string, string>;
  clients: Map<string, string>;
}

async function provenanceNames(web: WebContext, items: readonly MemoryItem[]): Promise<ProvenanceNames> {
  const [people, clients] = await Promise.all([
    namesOfPeople(
      web.ctx.db,
      items.flatMap((item) => (item.provenance.on_behalf_of ? [item.provenance.on_behalf_of.person_id] : [])),
    ),
    namesOfClients(
      web.ctx.db,
      items.flatMap((item) => (item.provenance.client_id ? [item.provenance.client_id] : [])),
    ),
  ]);
  return { people, clients };
}
