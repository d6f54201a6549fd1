/**
 * zod pieces shared by the REST routes and the MCP tools, so both validate limits, cursors and flags
 * the same way (spec section 8).
 */
import { z } from 'zod';
import { isoDatePattern } from '../platform/time.js';

/**
 * A page size: an integer in 1..max, `fallback` when absent. A JSON number: MCP arguments arrive typed, so
 * `"limit": true` is refused rather than read as 1; REST query strings are turned into numbers by the HTTP
 * adapter (platform/http.ts) before they reach this schema.
 */
export function limitField(fallback: number, max: number) {
  return z.number().int().min(1).max(max).default(fallback).describe('items per page');
}

/** An ISO 8601 date or date-time, as cursors and date filters are given (spec section 8). */
export const isoDate = z
  .string()
  .regex(isoDatePattern, 'an ISO 8601 date, e.g. 2026-01-31T12:00:00Z')
  .refine((value) => !Number.isNaN(Date.parse(value)), 'not a valid date');

/** `true`/`false` (or `1`/`0`) in a query string. */
export const queryBoolean = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');
