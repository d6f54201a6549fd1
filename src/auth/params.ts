/**
 * Reading OAuth parameters from a query string or form body as Fastify parses them (a repeated name
 * becomes an array).
 */
import { InvalidRequest } from './errors.js';

export type RawParams = Record<string, string | string[] | undefined>;

/** RFC 6749 §3.1 and §3.2: parameters must not be included more than once. */
export function optionalParam(params: RawParams, name: string): string | undefined {
  const value = params[name];
  if (Array.isArray(value)) throw new InvalidRequest(`${name} must not be repeated`);
  // RFC 6749 §3.1: parameters sent without a value are treated as omitted.
  return value === '' ? undefined : value;
}

export function requiredParam(params: RawParams, name: string): string {
  const value = optionalParam(params, name);
  if (value === undefined) throw new InvalidRequest(`${name} is required`);
  return value;
}
