/**
 * zod pieces shared by the REST routes and the MCP tools, so both validate limits, cursors and flags
 * the same way (spec section 8).
 */
import { z } from 'zod';
import { isIsoDate, isoDatePattern } from '../platform/time.js';

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
  // Date.parse rolls 2026-02-30 over to March; PostgreSQL refuses it. A day that does not exist is bad input.
  .refine(isIsoDate, 'not a valid date');

/** `true`/`false` (or `1`/`0`) in a query string. */
export const queryBoolean = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

/**
 * Spec 2.7: a changelog version has the form `v<major>.<minor>.<patch>`. Read as semantic versioning reads
 * it: no leading zeros (`v01.2.3` would be a second spelling of `v1.2.3`, and versions are unique), and at
 * most nine digits a part. The changelog's entries and the roadmap's `changelog_version` both use this rule.
 */
export const VERSION_PATTERN = /^v(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/;
export const versionSchema = z.string().regex(VERSION_PATTERN, 'v<major>.<minor>.<patch>, e.g. v1.4.0');

/** DESIGN 3: a slug the client gives must already be in the form derived slugs have (slugs.ts). */
export const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const MAX_SLUG_LENGTH = 80;

export const slugSchema = z
  .string()
  .max(MAX_SLUG_LENGTH)
  .regex(SLUG_PATTERN, 'lower-case letters, digits and single dashes, e.g. my-first-post');
