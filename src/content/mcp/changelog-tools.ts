/** The five changelog tools of spec 4.3, over content/changelog/ (state machine of spec 3.2). */
import { getEntry, listPublishedEntries } from '../changelog/queries.js';
import { createEntry, deleteEntry, setEntryStatus, updateEntry } from '../changelog/workflow.js';
import { atomically } from './atomically.js';
import { DELETE, READ, WRITE, defineTool } from './tools.js';

export const changelogTools = [
  defineTool({
    name: 'list_changelog_entries',
    description: 'List published changelog entries, newest first, without their markdown bodies, optionally of one type.',
    annotations: READ,
    run: (args, { ctx }) => listPublishedEntries(ctx, args),
  }),

  defineTool({
    name: 'get_changelog_entry',
    description: 'Get one changelog entry, by slug or version, in any status (draft, review or published), with its full markdown.',
    annotations: READ,
    // Spec 4.3 gives this tool no include_drafts; MCP callers hold the secret and manage the content, and an
    // entry must be readable between create and publish, so every status is found (as REST preview does).
    run: ({ identifier }, { ctx }) => getEntry(ctx, identifier, { include_drafts: true }),
  }),

  defineTool({
    name: 'create_changelog_entry',
    description:
      'Create a changelog entry for a version of the form v<major>.<minor>.<patch> (one entry per version). title ' +
      'defaults to "Release <version>", type to release, status to draft (draft or published).',
    annotations: WRITE,
    run: (args, { ctx, actor }) => createEntry(ctx, args, actor),
  }),

  defineTool({
    name: 'update_changelog_entry',
    description:
      'Update any of title, summary, content, type and highlights of a changelog entry, and optionally move its status. ' +
      'The only status moves allowed are draft to review (the entry must then have a title and content) and review to ' +
      'published; a draft cannot be set straight to published. A refused move changes nothing.',
    annotations: WRITE,
    run: ({ identifier, status, ...changes }, { ctx, actor }) =>
      atomically(ctx, async (tx) => {
        const fieldsGiven = Object.values(changes).some((value) => value !== undefined);
        // With neither fields nor a status, updateEntry gives its "nothing to update" refusal.
        let entry = fieldsGiven || !status ? await updateEntry(tx, identifier, changes, actor) : undefined;
        if (status) entry = await setEntryStatus(tx, identifier, status, actor);
        return entry;
      }),
  }),

  defineTool({
    name: 'delete_changelog_entry',
    description:
      'Permanently delete a changelog entry, by slug or version. Only a draft can be deleted: an entry in review or ' +
      'published is refused with invalid_state. Deletion is irreversible, so a person should confirm before you call this.',
    annotations: DELETE,
    run: ({ identifier }, { ctx, actor }) => deleteEntry(ctx, identifier, actor),
  }),
];
