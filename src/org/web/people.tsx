/**
 * GET /people (DESIGN 4.6 "people and spaces", issue 19 item 4): who is in which space, with what role. An owner
 * or admin sees every space and every person; anyone else the spaces they belong to and the people in them, and
 * of those people only the spaces they share with the viewer. Nothing of anyone else, and never a password.
 *
 * Owners and admins also manage here (issue 20 item 1, people-manage.tsx): this is where a person looks for who
 * belongs, so inviting, roles, removal and spaces sit beside the lists they change.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { id as fieldId } from '../fields.js';
import { listPeople, listSpacesWithMembers, type VisibleSpaces } from '../people/directory.js';
import { listPendingInvitations } from '../people/invitations.js';
import { listActivePeople } from '../people/records.js';
import { consolePage } from './console.js';
import { cursorField, optionalField, pageHref, Pager, spaceNamer, visibleSpaces } from './parts.js';
import { CreateSpaceForm, InviteForm, ManageSpace, PEOPLE_DONE, PersonControls, registerPeopleManagement, WaitingInvitations } from './people-manage.js';
import { FromFile } from './manage.js';
import type { WebContext } from './respond.js';

const PAGE_SIZE = 50;

const peopleQuery = z.object({
  space: optionalField(fieldId()),
  cursor: cursorField,
  spaces_cursor: cursorField,
  done: optionalField(z.enum(Object.keys(PEOPLE_DONE) as [string, ...string[]])),
});

export function registerPeoplePage(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;
  registerPeopleManagement(app, web);

  consolePage(app, web, '/people', peopleQuery, async (viewer, { query }) => {
    const visible: VisibleSpaces = viewer.scope.all ? 'all' : viewer.scope.spaceIds;
    const [names, spaces, people] = await Promise.all([
      visibleSpaces(db, viewer.scope),
      listSpacesWithMembers(db, visible, { limit: PAGE_SIZE, cursor: query.spaces_cursor }),
      listPeople(db, visible, { spaceId: query.space, limit: PAGE_SIZE, cursor: query.cursor }),
    ]);
    const spaceName = spaceNamer(names);
    // Owners and admins manage; the scope says who they are (console.ts), the forms' POSTs check it again.
    const manager = viewer.scope.all;
    const chosen = names.find((space) => space.id === query.space);
    // Controls for the chosen space only when it is the console's (a space on another page of the list gets none).
    const managed = manager && chosen && spaces.rows.find((space) => space.id === chosen.id)?.managed_by === 'console' ? chosen : undefined;
    const [invitations, candidates] = manager
      ? await Promise.all([listPendingInvitations(db), managed ? listActivePeople(db, { notInSpace: managed.id }) : []])
      : [[], []];
    return {
      title: 'People',
      body: (
        <>
          <h1>People and spaces</h1>
          <p class="muted">
            {viewer.scope.all
              ? 'As an owner or admin you see every space and every person.'
              : 'You see the spaces you belong to and the people in them.'}
          </p>
          {query.done ? <p role="status">{PEOPLE_DONE[query.done]}</p> : null}
          <h2>Spaces</h2>
          {spaces.rows.length === 0 ? (
            <p>You belong to no space yet.</p>
          ) : (
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Space</th>
                  <th scope="col">Key</th>
                  <th scope="col">People</th>
                </tr>
              </thead>
              <tbody>
                {spaces.rows.map((space) => (
                  <tr key={space.id}>
                    <td data-label="Space">
                      <a href={pageHref('/people', { space: space.id })} aria-current={space.id === query.space ? 'true' : undefined}>
                        {space.name}
                      </a>
                      <FromFile managedBy={space.managed_by} />
                    </td>
                    <td data-label="Key">
                      <code>{space.key}</code>
                    </td>
                    <td data-label="People">{space.members}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Pager path="/people" query={{ space: query.space, cursor: query.cursor }} cursor={query.spaces_cursor} next={spaces.next_cursor} label="Spaces" param="spaces_cursor" />
          {manager ? (
            <details>
              <summary>Create a space</summary>
              <CreateSpaceForm csrf={viewer.csrf} />
            </details>
          ) : null}
          {managed ? (
            <>
              <h2>Manage {managed.name}</h2>
              <ManageSpace space={managed} candidates={candidates} csrf={viewer.csrf} />
            </>
          ) : null}
          <h2>{query.space ? `People in ${spaceName(query.space)}` : 'People'}</h2>
          {query.space ? (
            <p>
              <a href="/people">Everyone you can see</a>
            </p>
          ) : null}
          {people.rows.length === 0 ? (
            <p>Nobody.</p>
          ) : (
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Spaces</th>
                  {manager ? <th scope="col">Manage</th> : null}
                </tr>
              </thead>
              <tbody>
                {people.rows.map((person) => (
                  <tr key={person.id}>
                    <td data-label="Name">
                      <a href={pageHref('/activity', { person: person.id })} title={`What was done by or for ${person.name}`}>
                        {person.name}
                      </a>
                      {person.id === viewer.person.id ? <small> (you)</small> : null}
                    </td>
                    <td data-label="Email">{person.email}</td>
                    <td data-label="Role">
                      <span class={`badge ${person.role}`}>{person.role}</span>
                    </td>
                    <td data-label="Spaces">{person.space_ids.length ? person.space_ids.map(spaceName).sort().join(', ') : 'none'}</td>
                    {manager ? (
                      <td data-label="Manage">
                        <PersonControls viewer={viewer.person} person={person} space={managed} csrf={viewer.csrf} />
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Pager path="/people" query={{ space: query.space, spaces_cursor: query.spaces_cursor }} cursor={query.cursor} next={people.next_cursor} label="People" />
          {manager ? (
            <>
              <h2>Invite someone</h2>
              <InviteForm viewer={viewer.person} spaces={names} csrf={viewer.csrf} />
              <h2>Waiting invitations</h2>
              <WaitingInvitations invitations={invitations} viewer={viewer.person} csrf={viewer.csrf} />
            </>
          ) : null}
        </>
      ),
    };
  });
}
