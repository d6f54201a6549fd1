/** Argument pieces the tools share. */
import { z } from 'zod';

/** The slug (or changelog identifier) naming an existing record, as the REST path parameter takes it. */
export function identifier(description: string) {
  return z.string().min(1).max(200).describe(description);
}
