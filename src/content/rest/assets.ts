/**
 * Assets over REST (spec 4.4): `POST /assets/upload` (multipart), `GET /assets/<key>` (public),
 * `DELETE /assets/<key>`. Multipart parsing lives in this scope only; every other route keeps refusing
 * multipart bodies with 415.
 */
import fastifyMultipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isAppError } from '../../platform/errors.js';
import { sendError, toAppError, type HttpServer } from '../../platform/http.js';
import { actorFields, actorSchema, takeActor } from '../actor.js';
import {
  assertAcceptable,
  assetKeySchema,
  deleteAsset,
  discardUpload,
  MAX_ASSET_BYTES,
  openAsset,
  pruneStagedUploads,
  stageUpload,
  StagedUpload,
  storeUpload,
  uploadAssetFields,
} from '../assets.js';
import type { ContentContext } from '../context.js';
import { contentErrors } from '../errors.js';
import { SECRET_REQUIRED } from './auth.js';

/** Room for boundaries, part headers and the small fields around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

const uploadBody = z
  .object({
    file: z
      .custom<StagedUpload>((value) => value instanceof StagedUpload, 'a file part holding a PNG, JPEG or WebP image')
      .meta({ type: 'string', format: 'binary', description: 'The image; PNG, JPEG or WebP, at most 5 MB' }),
    ...uploadAssetFields,
    ...actorFields,
  })
  .strict();

const assetBody = z.object({ url: z.string(), key: z.string() });
const keyParams = z.object({ '*': assetKeySchema });

export function registerAssetRoutes(app: HttpServer, ctx: ContentContext): void {
  const staged = new WeakMap<FastifyRequest, StagedUpload[]>();
  pruneStagedUploads(ctx).then(
    (removed) => removed && ctx.log.info({ removed }, 'removed abandoned upload staging files'),
    (error) => ctx.log.warn({ err: error }, 'could not prune the upload staging directory'),
  );

  app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<ZodTypeProvider>();
    await scope.register(fastifyMultipart, {
      // Fields and the file land in `request.body`, so the route's zod schema validates the whole form;
      // the file itself is streamed to disk by `onFile`, never buffered.
      attachFieldsToBody: 'keyValues',
      throwFileSizeLimit: false,
      // One byte past the limit tells an oversize file apart; busboy discards the rest as it arrives.
      limits: { fileSize: MAX_ASSET_BYTES + 1, files: 1, fields: 10, fieldSize: 1024, parts: 12 },
      async onFile(this: FastifyRequest, part: MultipartFile) {
        cutOffRunawayBody(this);
        const upload = await stageUpload(ctx, part.file, part.filename ?? '');
        staged.set(this, [...(staged.get(this) ?? []), upload]);
        (part as MultipartFile & { value: unknown }).value = upload;
      },
    });

    // Busboy reports broken framing (no boundary, cut-off parts) as plain errors: they are the client's.
    scope.setErrorHandler((error, request, reply) =>
      sendError(
        isMalformedMultipart(error) ? contentErrors.invalidRequest(`malformed multipart body: ${error.message}`) : toAppError(error, request),
        reply,
      ),
    );

    // Whatever the outcome, a staged file the handler did not move away is removed.
    scope.addHook('onResponse', async (request) => {
      for (const upload of staged.get(request) ?? []) await discardUpload(upload);
    });

    scope.post(
      '/assets/upload',
      {
        config: SECRET_REQUIRED,
        onRequest: refuseDeclaredOversize,
        // After the form is read, before field validation: size and type refusals come first (413, 415).
        preValidation: async (request) => {
          const file = (request.body as { file?: unknown } | undefined)?.file;
          if (file instanceof StagedUpload) assertAcceptable(file);
        },
        schema: {
          tags: ['assets'],
          summary: 'Upload an image',
          description:
            'Multipart form: `file` (PNG, JPEG or WebP by its bytes, at most 5 MB), `type` (inline or og), `slug` ' +
            '(names the file), `actor_id`, `actor_type`. Answers 413 when the file is too large, 415 when it is not an accepted image.',
          consumes: ['multipart/form-data'],
          body: uploadBody,
          response: { 201: assetBody },
        },
      },
      async (request, reply) => {
        const [actor, { file, type, slug }] = takeActor(request.body);
        return reply.code(201).send(await storeUpload(ctx, file, { type, slug }, actor));
      },
    );

    scope.get(
      '/assets/*',
      { schema: { tags: ['assets'], summary: 'Download an asset', params: keyParams } },
      async (request, reply) => {
        const asset = await openAsset(ctx, request.params['*']);
        return reply
          .type(asset.contentType)
          .header('content-length', asset.size)
          // Keys carry a random part and are never reused for other bytes.
          .header('cache-control', 'public, max-age=31536000, immutable')
          // Never run as a document, even when opened directly: a header that only claims to be an image
          // cannot carry a script (CSP3 §6.3.2 sandbox), and no type is guessed from the bytes.
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'; sandbox")
          .send(asset.handle.createReadStream());
      },
    );

    scope.delete(
      '/assets/*',
      {
        config: SECRET_REQUIRED,
        schema: {
          tags: ['assets'],
          summary: 'Delete an asset',
          params: keyParams,
          body: actorSchema.strict(),
          response: { 200: z.object({ key: z.string(), deleted: z.literal(true) }) },
        },
      },
      async (request) => deleteAsset(ctx, request.params['*'], request.body),
    );
  });
}

const MULTIPART_FRAMING_ERROR = /multipart|boundary|needle|terminated early/i;

function isMalformedMultipart(error: unknown): error is Error {
  return (
    error instanceof Error &&
    !isAppError(error) &&
    (error as { statusCode?: number }).statusCode === undefined &&
    MULTIPART_FRAMING_ERROR.test(error.message)
  );
}

/**
 * A body without a declared length is read (and its excess discarded) until the form ends, so the client
 * receives its 413; one that goes on past twice the limit is cut off, so nobody can keep a worker reading
 * forever. Counting starts once the form is flowing into the parser, so no byte is lost to it.
 */
function cutOffRunawayBody(request: FastifyRequest): void {
  let received = 0;
  request.raw.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > 2 * (MAX_ASSET_BYTES + FORM_OVERHEAD_BYTES)) request.raw.destroy();
  });
}

/** A body whose declared length already exceeds any acceptable form is refused before it is read. */
async function refuseDeclaredOversize(request: FastifyRequest): Promise<void> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > MAX_ASSET_BYTES + FORM_OVERHEAD_BYTES) {
    throw contentErrors.payloadTooLarge(`the upload is larger than ${MAX_ASSET_BYTES} bytes (5 MB)`);
  }
}
