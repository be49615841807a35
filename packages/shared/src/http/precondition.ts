/**
 * Optimistic concurrency on a resource (RFC 9110 §8.8.3 `ETag`, §13.1.1 `If-Match`): its
 * validator is the resource's revision where the data lives (the token service counts it up in
 * the transaction of every change), sent as a strong entity tag `"v<revision>"`
 * (docs/decisions/0043-etag-from-revisions.md).
 *
 * A change with `If-Match` is decided where the data is, under the row's lock: account-admin
 * parses the header at its edge and hands it on with the request's first change to the token
 * service (`conditionalCall`, read by the internal API client), whose change checks it in its
 * transaction (`takePrecondition`). So of two changes with the same `If-Match`, exactly one
 * finds the revision it names; the other gets `412`. Without `If-Match` nothing is checked.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestHandler } from 'express';

/** The header as a precondition: any current representation (`*`), or one of these revisions. */
export type IfMatch = { any: true } | { any: false; revisions: readonly number[] };

const TAG = /^\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*$/;
const REVISION = /^v([1-9][0-9]{0,15})$/;
/** A header longer than this is refused: a client names one tag, a few at most. */
export const IF_MATCH_MAX = 1024;

/** The strong entity tag of a revision. */
export function etagOf(revision: number): string {
  return `"v${revision}"`;
}

/**
 * The header's precondition; `undefined` when it is absent; `null` when it is malformed (the
 * caller answers 400). Weak tags never match (§13.1.1 compares strongly), nor does a tag that is
 * not one of ours: both leave a list that matches no revision, so the change gets 412.
 */
export function parseIfMatch(header: string | string[] | undefined): IfMatch | undefined | null {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.length > IF_MATCH_MAX) return null;
  if (value.trim() === '*') return { any: true };
  const revisions: number[] = [];
  for (const part of value.split(',')) {
    const tag = TAG.exec(part);
    if (tag === null) return null;
    if (tag[1] !== undefined) continue;
    const revision = REVISION.exec(tag[2]!);
    if (revision !== null) revisions.push(Number(revision[1]));
  }
  return { any: false, revisions };
}

/** Whether a resource at `revision` meets the precondition. */
export function meets(precondition: IfMatch, revision: number): boolean {
  return precondition.any || precondition.revisions.includes(revision);
}

/** The header form of a precondition, as the internal API receives it. */
export function ifMatchHeader(precondition: IfMatch): string {
  return precondition.any ? '*' : precondition.revisions.map(etagOf).join(', ') || '""';
}

interface PendingPrecondition {
  precondition: IfMatch | undefined;
}

const pending = new AsyncLocalStorage<PendingPrecondition>();

/**
 * Runs `fn` (a request's use case, after its body was read) with the request's precondition
 * pending: the first change it makes takes it (`takePrecondition`). A use case that changes a
 * resource in more than one step is decided at its first: the steps after it, and any undoing
 * of them, go unconditioned, and a concurrent change with the same `If-Match` has lost already.
 */
export function conditionalCall<T>(precondition: IfMatch | undefined, fn: () => T): T {
  return pending.run({ precondition }, fn);
}

/** The pending precondition, taken: later calls of the same request get none. */
export function takePrecondition(): IfMatch | undefined {
  const store = pending.getStore();
  if (store === undefined) return undefined;
  const { precondition } = store;
  store.precondition = undefined;
  return precondition;
}

/**
 * `route` with its use case (its last handler, after the body was read) run under the request's
 * `If-Match` (`conditionalCall`); a malformed header is `invalid()` (the service's own 400).
 * A route of a resource whose changes check their precondition (where the data lives) adopts
 * `If-Match` by this alone. A precondition on a resource that is not there is false (RFC 9110
 * §13.1.1): with `If-Match`, the use case's 404 is `failed()` (the 412), so a change that lost
 * to a racing delete is told so as one that lost to any other change, whichever took the lock
 * first; without `If-Match` a 404 stays a 404.
 */
export function conditionalRoute<R extends { handlers: readonly RequestHandler[] }>(
  route: R,
  invalid: () => Error,
  failed: () => Error,
): R {
  const handlers = [...route.handlers];
  const useCase = handlers.pop();
  if (useCase === undefined) return route;
  const conditional: RequestHandler = async (req, res, next) => {
    const precondition = parseIfMatch(req.headers['if-match']);
    if (precondition === null) return next(invalid());
    const onError = (err?: unknown) =>
      next(precondition !== undefined && statusOf(err) === 404 ? failed() : err);
    try {
      await conditionalCall(precondition, () => useCase(req, res, onError));
    } catch (err) {
      onError(err);
    }
  };
  return { ...route, handlers: [...handlers, conditional] };
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}
