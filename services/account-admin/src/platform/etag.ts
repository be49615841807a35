/**
 * `ETag` / `If-Match` on `/api/v1` (docs/decisions/0043-etag-from-revisions.md): a resource
 * answers its revision as a strong `ETag`; a change route made `conditional` runs its use case
 * under the request's `If-Match`, which the token service checks in the change's transaction
 * (precondition.ts of @plant/shared/http). A change without `If-Match` is unconditional, as
 * the portal sends it.
 */
import { conditionalRoute, etagOf } from '@plant/shared/http';
import type { Response } from 'express';
import { InvalidIfMatch, PreconditionFailed } from './errors.js';

/** Sets the resource's `ETag` and answers its body without the revision (the header carries it). */
export function etagged<T extends { revision: number }>(
  res: Response,
  resource: T,
): Omit<T, 'revision'> {
  res.setHeader('etag', etagOf(resource.revision));
  return withoutRevision(resource);
}

/** The public body of a resource: the revision is its `ETag`, not a field. */
export function withoutRevision<T extends { revision: number }>(resource: T): Omit<T, 'revision'> {
  const { revision: _revision, ...body } = resource;
  return body;
}

/** A change route of a resource with a revision: `If-Match` honoured, a malformed one 400. */
export function conditional<R extends Parameters<typeof conditionalRoute>[0]>(route: R): R {
  return conditionalRoute(
    route,
    () => new InvalidIfMatch(),
    () => new PreconditionFailed(),
  );
}
