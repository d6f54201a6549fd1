/**
 * What owners and admins do on /people (DESIGN 4.6, issue 20 item 1): invite a person by a one-time link (shown once,
 * here), withdraw a waiting invitation, change a role or a name, remove a person (after a confirmation), and create,
 * rename and fill spaces. The forms are drawn by people.tsx for owners and admins only; every POST goes through
 * `managementPost`, so anyone else is refused with 403 whatever they send. Records the organization file declares
 * carry the "from org.yaml" badge and no controls.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import type { DirectoryPerson } from '../people/directory.js';
import { queueInvitationEmail } from '../notifications/invitations.js';
import { INVITATION_DAYS, invitationLink, invitePerson, inviteInput, withdrawInvitation, withdrawInvitationInput, type PendingInvitation } from '../people/invitations.js';
import { changeRole, changeRoleInput, removePerson, removePersonInput, renameOther, renameOtherInput, ROLES_GIVEN_BY } from '../people/manage.js';
import { getPerson, type Person, type Role } from '../people/records.js';
import { addMember, createSpace, createSpaceInput, removeMember, renameSpace, renameSpaceInput, spaceMemberInput } from '../spaces/manage.js';
import type { Space } from '../spaces/records.js';
import type { Changed } from '../../auth/index.js';
import type { Tx } from '../../platform/database.js';
import { ORG_DIRECTORY, writeOrg } from '../changes.js';
import { managementPost } from './manage-form.js';
import { ColumnHeads, ConfirmPage, pageHref, Time } from './parts.js';
import { FromFile } from './manage.js';
import { formField, formFields, sendPersonalPage, type WebContext } from './respond.js';

/** The note /people shows after a change (`?done=`). */
export const PEOPLE_DONE: Record<string, string> = {
  role: 'The role was changed.',
  role_kept: 'Nothing to change: they already have that role.',
  renamed: 'The name was changed.',
  name_kept: 'Nothing to change: that is already their name.',
  removed: 'The person was removed: their sessions ended and their connected clients were disconnected.',
  withdrawn: 'The invitation was withdrawn: its link no longer works.',
  space_created: 'The space was created.',
  space_renamed: 'The space was renamed.',
  member_added: 'The person was added to the space.',
  member_removed: 'The person was taken out of the space.',
};

const fields = (body: unknown, ...names: string[]) => Object.fromEntries(names.map((name) => [name, formField(body, name)]));

export function registerPeopleManagement(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;
  /** Who belongs where is read from memory by every process (read-cache.ts): each change here announces it. */
  const changingDirectory = <T,>(work: (tx: Tx, changed: Changed) => Promise<T>) => writeOrg(web.ctx, [ORG_DIRECTORY], work);

  managementPost(app, web, '/people/invite', {
    back: '/people',
    input: inviteInput,
    read: (body) => ({ ...fields(body, 'email', 'name', 'role'), space_ids: formFields(body, 'space_ids') }),
    async run(person, input, { reply, session, csrf }) {
      const emailed = !!web.ctx.config.mail;
      const { invitation, link } = await db.transaction(async (tx) => {
        const made = await invitePerson(tx, person, input);
        const link = invitationLink(web.ctx.config.publicUrl, made.token);
        if (emailed) await queueInvitationEmail(tx, made.invitation.id, link);
        return { invitation: made.invitation, link };
      });
      // The link is never stored with the invitation, so it is shown now, once, and never redirected to.
      reply.code(201);
      return sendPersonalPage(web, reply, session, csrf, 'Invitation ready', <InvitationLink invitation={invitation} link={link} emailed={emailed} />, '/people');
    },
  });

  managementPost(app, web, '/people/invitations/withdraw', {
    back: '/people',
    input: withdrawInvitationInput,
    read: (body) => fields(body, 'invitation_id'),
    run: async (person, input) => (await withdrawInvitation(db, person, input), '/people?done=withdrawn'),
  });

  managementPost(app, web, '/people/role', {
    back: '/people',
    input: changeRoleInput,
    read: (body) => fields(body, 'person_id', 'role'),
    run: async (person, input) => ((await changingDirectory((tx) => changeRole(tx, person, input))) ? '/people?done=role' : '/people?done=role_kept'),
  });

  managementPost(app, web, '/people/name', {
    back: '/people',
    input: renameOtherInput,
    read: (body) => fields(body, 'person_id', 'name'),
    // Names are read from memory by every process (service_context, sessions): the change is announced.
    run: async (person, input) => ((await changingDirectory((tx) => renameOther(tx, person, input))) ? '/people?done=renamed' : '/people?done=name_kept'),
  });

  managementPost(app, web, '/people/remove', {
    back: '/people',
    input: removePersonInput.extend({ confirm: z.literal('yes').optional() }),
    read: (body) => fields(body, 'person_id', 'confirm'),
    async run(person, input, { reply, session, csrf }) {
      if (input.confirm) return (await changingDirectory((tx, changed) => removePerson(tx, person, input, changed)), '/people?done=removed');
      const target = await getPerson(db, input.person_id);
      if (!target) return '/people';
      return sendPersonalPage(web, reply, session, csrf, `Remove ${target.name}?`, <ConfirmRemoval target={target} csrf={csrf} />, '/people');
    },
  });

  managementPost(app, web, '/people/spaces', {
    back: '/people',
    input: createSpaceInput,
    read: (body) => fields(body, 'key', 'name'),
    run: async (person, input) => `/people?space=${encodeURIComponent(await changingDirectory((tx) => createSpace(tx, person, input)))}&done=space_created`,
  });

  managementPost(app, web, '/people/spaces/rename', {
    back: '/people',
    input: renameSpaceInput,
    read: (body) => fields(body, 'space_id', 'name'),
    run: async (person, input) => (await changingDirectory((tx) => renameSpace(tx, person, input)), spaceDone(input.space_id, 'space_renamed')),
  });

  managementPost(app, web, '/people/spaces/members/add', {
    back: '/people',
    input: spaceMemberInput,
    read: (body) => fields(body, 'space_id', 'person_id'),
    run: async (person, input) => (await changingDirectory((tx) => addMember(tx, person, input)), spaceDone(input.space_id, 'member_added')),
  });

  managementPost(app, web, '/people/spaces/members/remove', {
    back: '/people',
    input: spaceMemberInput,
    read: (body) => fields(body, 'space_id', 'person_id'),
    run: async (person, input) => (await changingDirectory((tx) => removeMember(tx, person, input)), spaceDone(input.space_id, 'member_removed')),
  });
}

function spaceDone(spaceId: string, done: string): string {
  return pageHref('/people', { space: spaceId, done });
}

function InvitationLink({ invitation, link, emailed }: { invitation: PendingInvitation; link: string; emailed: boolean }): VNode {
  return (
    <>
      <h1>Invitation ready</h1>
      <p role="status">
        {invitation.name} ({invitation.email}) is invited as {invitation.role}.{' '}
        {emailed ? 'The link is on its way to them by email; you may also pass it on yourself.' : 'Pass this link on to them.'} It is shown only now, works
        once, and expires on <Time value={invitation.expires_at} />.
      </p>
      <h2>Invitation link</h2>
      <pre>
        <code id="invitation-link">{link}</code>
      </pre>
      <p>
        <a href="/people">Back to people</a>
      </p>
    </>
  );
}

function ConfirmRemoval({ target, csrf }: { target: Person; csrf: string }): VNode {
  return (
    <ConfirmPage
      title={`Remove ${target.name}?`}
      action="/people/remove"
      fields={{ person_id: target.id }}
      csrf={csrf}
      confirm={`Remove ${target.name}`}
      keep={{ href: '/people', label: `Keep ${target.name}` }}
    >
      {target.name} ({target.email}) will no longer be able to sign in. Their web sessions end at once, every client they connected is disconnected, and
      they leave every space. What they did stays in the records, under their name. You can invite them again later.
    </ConfirmPage>
  );
}

/** A person's row controls for an owner or admin: their role and Remove, or why there are none. */
export function PersonControls({ viewer, person, space, csrf }: { viewer: Person; person: DirectoryPerson; space?: Space; csrf: string }): VNode {
  const given = ROLES_GIVEN_BY[viewer.role];
  const outOfSpace = space ? (
    <form method="post" action="/people/spaces/members/remove">
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="space_id" value={space.id} />
      <input type="hidden" name="person_id" value={person.id} />
      <button type="submit" class="secondary" aria-label={`Take out of ${space.name}: ${person.name}`}>
        Take out of {space.name}
      </button>
    </form>
  ) : null;
  if (person.managed_by === 'file') {
    return (
      <>
        <FromFile managedBy={person.managed_by} />
        {outOfSpace}
      </>
    );
  }
  if (!given.includes(person.role)) return outOfSpace ?? <span class="muted">Only an owner changes an owner.</span>;
  return (
    <>
      <form method="post" action="/people/role" class="inline-form">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="person_id" value={person.id} />
        <label class="visually-hidden" for={`role-${person.id}`}>
          Role of {person.name}
        </label>
        <select id={`role-${person.id}`} name="role">
          {given.map((role) => (
            <option key={role} value={role} selected={role === person.role}>
              {role}
            </option>
          ))}
        </select>
        <button type="submit" aria-label={`Change role of ${person.name}`}>
          Change role
        </button>
      </form>
      <details class="inline-form">
        <summary aria-label={`Rename ${person.name}`}>Rename</summary>
        <form method="post" action="/people/name">
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="person_id" value={person.id} />
          <label for={`name-${person.id}`}>New name for {person.name}</label>
          <input id={`name-${person.id}`} name="name" value={person.name} required maxLength={200} autocomplete="off" />
          <button type="submit">Save name</button>
        </form>
      </details>
      {outOfSpace}
      <form method="post" action="/people/remove">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="person_id" value={person.id} />
        <button type="submit" class="secondary" aria-label={`Remove ${person.name}`}>
          Remove
        </button>
      </form>
    </>
  );
}

/** Invite someone: email, name, role (those the viewer may give) and spaces to join. */
export function InviteForm({ viewer, spaces, csrf }: { viewer: Person; spaces: Space[]; csrf: string }): VNode {
  return (
    <form method="post" action="/people/invite" class="narrow">
      <input type="hidden" name="csrf" value={csrf} />
      <label for="invite-email">Email</label>
      <input id="invite-email" name="email" type="email" required maxlength={320} />
      <label for="invite-name">Name</label>
      <input id="invite-name" name="name" type="text" required maxlength={200} />
      <label for="invite-role">Role</label>
      <select id="invite-role" name="role">
        {[...ROLES_GIVEN_BY[viewer.role]].reverse().map((role: Role) => (
          <option key={role} value={role}>
            {role}
          </option>
        ))}
      </select>
      {spaces.length ? (
        <fieldset>
          <legend>Spaces to join</legend>
          {spaces.map((space) => (
            <p class="check" key={space.id}>
              <input type="checkbox" id={`invite-space-${space.id}`} name="space_ids" value={space.id} />
              <label class="inline" for={`invite-space-${space.id}`}>
                {space.name}
              </label>
            </p>
          ))}
        </fieldset>
      ) : null}
      <p class="muted">The link you get works once and expires after {INVITATION_DAYS} days.</p>
      <button type="submit">Create invitation link</button>
    </form>
  );
}

export function WaitingInvitations({ invitations, viewer, csrf }: { invitations: PendingInvitation[]; viewer: Person; csrf: string }): VNode {
  if (invitations.length === 0) return <p>No invitation is waiting.</p>;
  return (
    <table class="stack">
      <ColumnHeads names={['Name', 'Email', 'Role', 'Invited', 'Expires']} action="Action" />
      <tbody>
        {invitations.map((invitation) => (
          <tr key={invitation.id}>
            <th scope="row">{invitation.name}</th>
            <td data-label="Email">{invitation.email}</td>
            <td data-label="Role">
              <span class={`badge ${invitation.role}`}>{invitation.role}</span>
            </td>
            <td data-label="Invited">
              <Time value={invitation.created_at} />
              {invitation.invited_by ? ` by ${invitation.invited_by}` : null}
            </td>
            <td data-label="Expires">
              <Time value={invitation.expires_at} />
            </td>
            <td>
              {ROLES_GIVEN_BY[viewer.role].includes(invitation.role) ? (
                <form method="post" action="/people/invitations/withdraw">
                  <input type="hidden" name="csrf" value={csrf} />
                  <input type="hidden" name="invitation_id" value={invitation.id} />
                  <button type="submit" class="secondary" aria-label={`Withdraw the invitation of ${invitation.email}`}>
                    Withdraw
                  </button>
                </form>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function CreateSpaceForm({ csrf }: { csrf: string }): VNode {
  return (
    <form method="post" action="/people/spaces" class="narrow">
      <input type="hidden" name="csrf" value={csrf} />
      <label for="space-key">Space key (lower-case letters, digits, "_" or "-"; it never changes)</label>
      <input id="space-key" name="key" type="text" required maxlength={64} pattern="[a-z0-9][a-z0-9_\-]{0,63}" />
      <label for="space-name">Space name</label>
      <input id="space-name" name="name" type="text" required maxlength={200} />
      <button type="submit">Create space</button>
    </form>
  );
}

/** Rename the chosen space and add one of the active people not yet in it. */
export function ManageSpace({ space, candidates, csrf }: { space: Space; candidates: Person[]; csrf: string }): VNode {
  return (
    <>
      <form method="post" action="/people/spaces/rename" class="narrow">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="space_id" value={space.id} />
        <label for="space-rename">New name</label>
        <input id="space-rename" name="name" type="text" required maxlength={200} value={space.name} />
        <button type="submit">Rename space</button>
      </form>
      {candidates.length ? (
        <form method="post" action="/people/spaces/members/add" class="narrow">
          <input type="hidden" name="csrf" value={csrf} />
          <input type="hidden" name="space_id" value={space.id} />
          <label for="space-add">Person to add</label>
          <select id="space-add" name="person_id">
            {candidates.map((person) => (
              <option key={person.id} value={person.id}>
                {person.name} ({person.email})
              </option>
            ))}
          </select>
          <button type="submit">Add to {space.name}</button>
        </form>
      ) : (
        <p>Everyone is already in {space.name}.</p>
      )}
    </>
  );
}
