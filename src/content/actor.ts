import { z } from 'zod';
import { ACTOR_TYPES } from './contract.js';

/** Who made a write (spec 2.9, DESIGN 3): every REST write body carries it; MCP supplies it from the session. */
export const actorFields = {
  actor_id: z.string().min(1).max(200),
  actor_type: z.enum(ACTOR_TYPES),
};
export const actorSchema = z.object(actorFields);

export interface Actor {
  actor_id: string;
  actor_type: (typeof ACTOR_TYPES)[number];
}

/** Splits the actor out of a parsed REST body, leaving the operation's own fields. */
export function takeActor<T extends Actor>(body: T): [Actor, Omit<T, keyof Actor>] {
  const { actor_id, actor_type, ...rest } = body;
  return [{ actor_id, actor_type }, rest];
}
