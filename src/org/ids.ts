import { randomBytes } from 'node:crypto';

/** Opaque ids (spec 4.2 rule 2: clients never construct them): a readable prefix and 96 random bits. */
export function newId(
  prefix: 'org' | 'per' | 'spc' | 'agt' | 'cap' | 'rul' | 'op' | 'mem' | 'tsk' | 'q' | 'dec' | 'gv' | 'lr' | 'msg' | 'evt' | 'ep' | 'inv' | 'ntf',
): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
