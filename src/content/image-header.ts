/**
 * The header of an uploaded image, read by `image-size` rather than by hand: a file that only starts with
 * an image signature (a PNG signature followed by HTML, say) has no header to read and is refused, and so
 * is one whose dimensions are missing or absurd. A header's claims are all that is read; the bytes are
 * never decoded here, which is why assets are also served sandboxed (rest/assets.ts).
 */
import { readFile } from 'node:fs/promises';
import { imageSize } from 'image-size';

/** WebP's own limit (16,383) rounded up; larger images are no web page's inline or Open Graph image. */
export const MAX_IMAGE_SIDE = 16_384;

export interface ImageHeader {
  /** image-size's name of the format: `png`, `jpg`, `webp`, … */
  type: string;
  width: number;
  height: number;
}

/** The image's format and dimensions, or null when there is no readable header with sane dimensions. */
export async function readImageHeader(file: string): Promise<ImageHeader | null> {
  let header: ReturnType<typeof imageSize>;
  try {
    header = imageSize(await readFile(file));
  } catch {
    return null;
  }
  const { type, width, height } = header;
  if (!type || !isSaneSide(width) || !isSaneSide(height)) return null;
  return { type, width, height };
}

function isSaneSide(side: number | undefined): side is number {
  return Number.isInteger(side) && side! >= 1 && side! <= MAX_IMAGE_SIDE;
}
