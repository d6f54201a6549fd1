/**
 * get_asset_upload_url (spec 4.3): MCP carries no files, so the tool tells an agent how to upload one over
 * REST (POST /assets/upload, spec 4.4) and where the result will be served.
 */
import { actorFields } from '../actor.js';
import { ASSET_TYPES, MAX_ASSET_BYTES, uploadAssetFields, type ImageFormat } from '../assets.js';
import { READ, defineTool } from './tools.js';

/** Spec 8: PNG, JPEG and WebP only (assets.ts recognises them by their bytes). */
const ACCEPTED_TYPES: Array<ImageFormat['contentType']> = ['image/png', 'image/jpeg', 'image/webp'];

export const assetTools = [
  defineTool({
    name: 'get_asset_upload_url',
    description:
      'Describe how to upload an image: the upload endpoint (multipart POST with the bearer secret), its form fields, ' +
      'the accepted image types, the size limit and the base URL uploaded images are served from.',
    annotations: READ,
    run: async (_args, { ctx }) => {
      const base = ctx.config.publicUrl;
      return {
        upload_url: `${base}/assets/upload`,
        method: 'POST',
        content_type: 'multipart/form-data',
        authorization: 'Bearer <CONTENT_API_SECRET>',
        fields: {
          file: 'required: the image file',
          type: `${ASSET_TYPES.join(' or ')}, default inline (in-article images; og for Open Graph images)`,
          slug: 'optional: used to name the file',
          actor_id: 'required: who uploads (1 to 200 characters)',
          actor_type: `required: ${actorFields.actor_type.options.join(', ')}`,
        } satisfies Record<'file' | keyof typeof uploadAssetFields | keyof typeof actorFields, string>,
        accepted_types: ACCEPTED_TYPES,
        max_bytes: MAX_ASSET_BYTES,
        max_size: '5 MB',
        public_url_base: `${base}/assets/`,
        returns: '{ url, key }: url is public; key (e.g. inline/diagram-3f9a1c2b7e.png) deletes it with DELETE /assets/<key>',
      };
    },
  }),
];
