/**
 * Who acts, as account-admin names them in an internal API body (`actor`: the person, for the
 * trails). Every wing's internal routes take it, so it is the platform's, beside the route
 * helpers that check it (`accountActionRoute`).
 */
import { boundedText } from '@plant/shared/api';
import { z } from 'zod';

export const ACTOR_MAX = 320;

export const Actor = boundedText('actor', ACTOR_MAX);

export const ActorBodySchema = z.object(
  { actor: Actor.optional() },
  { error: 'body must be a JSON object' },
);
