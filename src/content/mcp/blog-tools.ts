/** The six blog tools of spec 4.3, over content/blog/ (state machine of spec 3.1). */
import { getPost, listPublishedPosts } from '../blog/queries.js';
import { createPost, deletePost, publishPost, updatePost } from '../blog/workflow.js';
import { DELETE, READ, WRITE, defineTool } from './tools.js';

export const blogTools = [
  defineTool({
    name: 'list_blog_posts',
    description:
      'List published blog posts, newest first, without their markdown bodies. Returns {posts, next_cursor, total}; ' +
      'pass next_cursor back as cursor for the next page (null means no more).',
    annotations: READ,
    run: (args, { ctx }) => listPublishedPosts(ctx, args),
  }),

  defineTool({
    name: 'get_blog_post',
    description:
      'Get one blog post with its full markdown content. Only published posts are found unless include_drafts is true, ' +
      'which also finds drafts and posts in review, scheduled or archived.',
    annotations: READ,
    run: ({ slug, include_drafts }, { ctx }) => getPost(ctx, slug, { include_drafts }),
  }),

  defineTool({
    name: 'create_blog_post',
    description:
      'Create a blog post. status is draft (default) or published; a draft is not public. The slug is derived from ' +
      'the title. description, when given, is an SEO description of 50 to 160 characters.',
    annotations: WRITE,
    run: (args, { ctx, actor }) => createPost(ctx, args, actor),
  }),

  defineTool({
    name: 'update_blog_post',
    description:
      'Update any of title, content, description and tags of a blog post in any state; the status does not change ' +
      '(use publish_blog_post to publish). Updating a published post refreshes the public site.',
    annotations: { ...WRITE, idempotentHint: true },
    run: ({ slug, ...changes }, { ctx, actor }) => updatePost(ctx, slug, changes, actor),
  }),

  defineTool({
    name: 'publish_blog_post',
    description:
      'Publish a blog post now, from any state, skipping review. It becomes public at once; publishing a post that is ' +
      'already published changes nothing.',
    annotations: { ...WRITE, idempotentHint: true },
    run: ({ slug }, { ctx, actor }) => publishPost(ctx, slug, actor),
  }),

  defineTool({
    name: 'delete_blog_post',
    description:
      'Permanently delete a blog post. Only a draft can be deleted: a post in review, scheduled, published or archived ' +
      'is refused with invalid_state. Deletion is irreversible, so a person should confirm before you call this.',
    annotations: DELETE,
    run: ({ slug }, { ctx, actor }) => deletePost(ctx, slug, actor),
  }),
];
