import { requestIdOf } from '@plant/shared/logging';
import Provider from 'oidc-provider';

/**
 * `{ reqId }` of a realm request, for a line logged while serving it: from its Koa context, or
 * by default from the one oidc-provider is serving (its own AsyncLocalStorage, set inside its
 * routes). The token service runs without the shared request context (see public-app.ts); the
 * request observer put the id on the Node request. Empty outside a realm request.
 */
export function grantRequestId(ctx: { req?: unknown } | undefined = Provider.ctx): {
  reqId?: string;
} {
  const id = requestIdOf(ctx?.req);
  return id === undefined ? {} : { reqId: id };
}
