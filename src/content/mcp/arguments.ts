/**
 * Argument pieces the tools share. Tool arguments arrive as typed JSON, unlike REST query strings, so where a
 * domain schema coerces text (a list `limit`) the tool takes that field's bounds and default but refuses
 * anything that is not a JSON number: `"limit": true` must not quietly become 1.
 */
import { z } from 'zod';

/** The slug (or changelog identifier) naming an existing record, as the REST path parameter takes it. */
export function identifier(description: string) {
  return z.string().min(1).max(200).describe(description);
}

interface DomainLimit {
  unwrap(): { minValue: number | null; maxValue: number | null };
  def: { defaultValue: unknown };
  description?: string;
}

/** A JSON-number version of a domain `limitField(default, max)` (content/fields.ts). */
export function jsonLimit(field: DomainLimit) {
  const { minValue, maxValue } = field.unwrap();
  const fallback = field.def.defaultValue as number;
  return z
    .number()
    .int()
    .min(minValue ?? 1)
    .max(maxValue ?? Number.MAX_SAFE_INTEGER)
    .default(fallback)
    .describe(field.description ?? `${minValue} to ${maxValue}, default ${fallback}`);
}
