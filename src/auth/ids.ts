/**
 * Opaque credentials and handles (DESIGN 4.7): 256 random bits, prefixed so a leaked value is recognizable
 * (secret scanners, logs) and a token of one kind is never mistaken for another. Only the SHA-256 hash of a
 * code or token is stored, so a database leak yields nothing presentable.
 */
import { createHash, randomBytes } from 'node:crypto';

export const PREFIX = {
  client: 'atr_cl_',
  request: 'atr_rq_',
  grant: 'atr_gr_',
  code: 'atr_ac_',
  accessToken: 'atr_at_',
  refreshToken: 'atr_rt_',
} as const;

export function randomToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
