/**
 * Uploaded images (spec 4.4 and 8, DESIGN section 3): PNG, JPEG or WebP recognised by their bytes, never by
 * the declared type or name — the signature while the bytes arrive, then the whole header and its dimensions
 * (image-header.ts); at most 5 MB; stored on disk under the asset directory with a key
 * `inline/<name>-<random>.<ext>` or `og/…`; served publicly; deleted without ever leaving the directory.
 *
 * An upload streams into a staging file while its bytes are counted, so an oversize body is cut off at
 * the limit instead of being held in memory, and fields sent after the file are still honoured: the staged
 * file only gets its key (type, slug) once the whole form has been read.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { mkdir, open, readdir, realpath, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { Actor } from './actor.js';
import { recordActivity } from './activity.js';
import { readImageHeader } from './image-header.js';
import type { ContentContext } from './context.js';
import { contentErrors } from './errors.js';
import { slugify } from './slugs.js';
import { slugSchema } from './fields.js';
import { writeContent } from './write.js';

export const ASSET_TYPES = ['inline', 'og'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

/** Spec 8: "5 MB maximum", read as 5 MiB (5,242,880 bytes); a file of exactly that size is accepted. */
export const MAX_ASSET_BYTES = 5 * 1024 * 1024;

/** A key names one file in a type directory: no dots but the extension's, no slashes but the type's. */
export const ASSET_KEY_PATTERN = /^(inline|og)\/[a-z0-9]+(?:-[a-z0-9]+)*\.(?:png|jpg|webp)$/;
export const assetKeySchema = z
  .string()
  .max(200)
  .regex(ASSET_KEY_PATTERN, 'an asset key such as inline/diagram-3f9a1c2b7e.png')
  .describe('The full storage path returned by the upload, e.g. inline/diagram-3f9a1c2b7e.png');

/** The form fields of an upload besides the file (the REST route adds the actor). */
export const uploadAssetFields = {
  type: z.enum(ASSET_TYPES).default('inline').describe('inline (in-article images) or og (Open Graph images)'),
  slug: slugSchema.optional().describe('Used to name the file; default the uploaded file name'),
};

export interface ImageFormat {
  contentType: 'image/png' | 'image/jpeg' | 'image/webp';
  extension: 'png' | 'jpg' | 'webp';
}

const PNG: ImageFormat = { contentType: 'image/png', extension: 'png' };
const JPEG: ImageFormat = { contentType: 'image/jpeg', extension: 'jpg' };
const WEBP: ImageFormat = { contentType: 'image/webp', extension: 'webp' };
const FORMAT_BY_EXTENSION: Record<string, ImageFormat> = { png: PNG, jpg: JPEG, webp: WEBP };

/** Bytes needed to recognise every accepted format (WebP's RIFF header is the longest). */
const SNIFF_BYTES = 12;

/**
 * The format the leading bytes announce, or null. Signatures: PNG (ISO/IEC 15948 §5.2) 89 50 4E 47 0D 0A
 * 1A 0A; JPEG SOI + marker FF D8 FF; WebP "RIFF" <size> "WEBP".
 */
export function sniffImageFormat(head: Uint8Array): ImageFormat | null {
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return PNG;
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return JPEG;
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return WEBP;
  return null;
}

/** An uploaded file waiting in the staging directory for the rest of the form. */
export class StagedUpload {
  constructor(
    readonly filename: string,
    /** Where the bytes are; null once the file was refused and removed. */
    readonly tempPath: string | null,
    readonly bytes: number,
    readonly format: ImageFormat | null,
    readonly tooLarge: boolean,
  ) {}
}

export interface Asset {
  url: string;
  key: string;
}

const stagingDir = (ctx: ContentContext) => path.join(ctx.config.assetDir, '.staging');

/**
 * Streams an uploaded file into the staging directory. Writing stops as soon as the bytes are known not
 * to be an accepted image or exceed the limit (the caller's stream should itself stop a byte after the
 * limit), and such a file is removed; the stream is still read to its end so the request completes.
 */
export async function stageUpload(ctx: ContentContext, file: AsyncIterable<Buffer>, filename: string): Promise<StagedUpload> {
  await mkdir(stagingDir(ctx), { recursive: true });
  const tempPath = path.join(stagingDir(ctx), `${randomBytes(12).toString('hex')}.part`);
  const out = createWriteStream(tempPath, { flags: 'wx' });
  const closed = once(out, 'close');
  let bytes = 0;
  let head = Buffer.alloc(0);
  let format: ImageFormat | null = null;
  let refused = false;
  try {
    for await (const chunk of file) {
      bytes += chunk.length;
      if (refused) continue;
      if (bytes > MAX_ASSET_BYTES) {
        refused = true;
        continue;
      }
      if (head.length < SNIFF_BYTES) {
        head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        if (head.length === SNIFF_BYTES) {
          format = sniffImageFormat(head);
          if (!format) {
            refused = true;
            continue;
          }
        }
      }
      if (!out.write(chunk)) await Promise.race([once(out, 'drain'), closed]);
    }
    if (head.length < SNIFF_BYTES) format = null;
    out.end();
    await closed;
    // The signature only says what the file claims to be; its header must say the same, with dimensions.
    if (format && !refused && (await readImageHeader(tempPath))?.type !== format.extension) format = null;
  } catch (error) {
    out.destroy();
    await closed.catch(() => {});
    await removeQuietly(tempPath);
    throw error;
  }
  const tooLarge = bytes > MAX_ASSET_BYTES;
  if (tooLarge || !format) {
    await removeQuietly(tempPath);
    return new StagedUpload(filename, null, bytes, format, tooLarge);
  }
  return new StagedUpload(filename, tempPath, bytes, format, false);
}

/** A staged file this old was left by a process that stopped mid-upload; no upload takes an hour. */
const STALE_STAGING_MS = 60 * 60 * 1000;

/** Removes staging files abandoned by a crash; run at start (other processes' live uploads are younger). */
export async function pruneStagedUploads(ctx: ContentContext, now = Date.now()): Promise<number> {
  const names = await readdir(stagingDir(ctx)).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    const file = path.join(stagingDir(ctx), name);
    const info = await stat(file).catch(() => null);
    if (info?.isFile() && now - info.mtimeMs > STALE_STAGING_MS) {
      await removeQuietly(file);
      removed++;
    }
  }
  return removed;
}

/** Refuses a staged file that is too large or not an accepted image (spec 8). */
export function assertAcceptable(upload: StagedUpload): asserts upload is StagedUpload & { format: ImageFormat; tempPath: string } {
  if (upload.tooLarge) throw contentErrors.payloadTooLarge(`the file is larger than ${MAX_ASSET_BYTES} bytes (5 MB)`);
  if (!upload.format || !upload.tempPath) {
    throw contentErrors.unsupportedMediaType(
      'the file is not a PNG, JPEG or WebP image with a readable header and sane dimensions (recognised by its bytes, not its declared type)',
    );
  }
}

/** Gives an accepted staged file its key and public URL, and records the upload in the activity log. */
export async function storeUpload(
  ctx: ContentContext,
  upload: StagedUpload,
  options: { type: AssetType; slug?: string },
  actor: Actor,
): Promise<Asset> {
  assertAcceptable(upload);
  const name = options.slug ?? slugify(upload.filename.replace(/\.[^.]*$/, '')).slice(0, 60).replace(/-+$/, '');
  const key = `${options.type}/${name}-${randomBytes(5).toString('hex')}.${upload.format.extension}`;
  const target = path.join(ctx.config.assetDir, key);
  await mkdir(path.dirname(target), { recursive: true });
  // The file moves inside the transaction: a failed log entry leaves no file, a failed move no entry.
  await writeContent(ctx, 'asset', async (tx, changed) => {
    changed(key);
    await recordActivity(tx, actor, {
      resource: 'asset',
      resourceId: key,
      action: 'created',
      summary: `uploaded ${key} (${upload.format.contentType}, ${upload.bytes} bytes)`,
    });
    await rename(upload.tempPath, target);
  });
  return { url: `${ctx.config.publicUrl}/assets/${key}`, key };
}

/** Removes a staged file the request did not keep (refused form, failed validation, client gone). */
export async function discardUpload(upload: StagedUpload): Promise<void> {
  if (upload.tempPath) await removeQuietly(upload.tempPath);
}

export interface OpenedAsset {
  handle: FileHandle;
  size: number;
  contentType: string;
}

/** Opens an asset for reading; the caller closes the handle (a read stream of it does). */
export async function openAsset(ctx: ContentContext, key: string): Promise<OpenedAsset> {
  const file = await resolveAssetFile(ctx, key);
  // O_NOFOLLOW: a symlink planted in the asset directory is not followed out of it.
  const handle = await open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW).catch(() => {
    throw contentErrors.notFound('asset', key);
  });
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    throw contentErrors.notFound('asset', key);
  }
  return { handle, size: stat.size, contentType: FORMAT_BY_EXTENSION[path.extname(key).slice(1)].contentType };
}

export async function deleteAsset(ctx: ContentContext, key: string, actor: Actor): Promise<{ key: string; deleted: true }> {
  const file = await resolveAssetFile(ctx, key);
  const handle = await open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW).catch(() => null);
  const isFile = handle ? (await handle.stat()).isFile() : false;
  await handle?.close();
  if (!isFile) throw contentErrors.notFound('asset', key);
  await writeContent(ctx, 'asset', async (tx, changed) => {
    changed(key);
    await recordActivity(tx, actor, { resource: 'asset', resourceId: key, action: 'deleted', summary: `deleted ${key}` });
    await unlink(file).catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? contentErrors.notFound('asset', key) : error;
    });
  });
  return { key, deleted: true };
}

/**
 * The file a key names, proven to lie inside the asset directory: the key must match the strict pattern
 * (no `..`, no backslash, no absolute path), and its type directory, resolved through any symlinks, must
 * be the asset directory's own. Anything else is reported as not found.
 */
async function resolveAssetFile(ctx: ContentContext, key: string): Promise<string> {
  if (!ASSET_KEY_PATTERN.test(key)) throw contentErrors.notFound('asset', key);
  const root = path.resolve(ctx.config.assetDir);
  const file = path.resolve(root, key);
  const [rootReal, dirReal] = await Promise.all([realpath(root), realpath(path.dirname(file))]).catch(() => {
    throw contentErrors.notFound('asset', key);
  });
  if (dirReal !== path.join(rootReal, key.split('/')[0])) throw contentErrors.notFound('asset', key);
  return path.join(dirReal, path.basename(file));
}

async function removeQuietly(file: string): Promise<void> {
  await unlink(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}
