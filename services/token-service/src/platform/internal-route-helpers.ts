import { NotFound, isTenantName } from '@plant/shared/api';
import { fieldsOf, type ExpressRoute } from '@plant/shared/http';
import type { Request, Response } from 'express';
import { isStorableText } from '@plant/shared/api';
import { ActorBodySchema } from './actor-body.js';
import type { InternalScope } from './internal-auth.js';
import { optionalJsonBody } from './optional-json-body.js';

/** With the input on each issue, the shared error text tells "missing" from "wrong type". */
export const REPORT_INPUT = { reportInput: true } as const;

/** Path parameters are checked before any query: a bad tenant name is simply an unknown realm. */
export function tenantOf(req: Request): string {
  const tenant = String(req.params.tenant);
  if (!isTenantName(tenant)) throw new NotFound('Tenant not found');
  return tenant;
}

export function idOf(req: Request, name: string): string {
  const value = String(req.params[name]);
  if (value.length > 128 || !isStorableText(value)) throw new NotFound();
  return value;
}

export function noStore(res: Response): Response {
  return res.setHeader('cache-control', 'no-store');
}

/** An internal route and the scope its caller needs (internal-auth.ts); the app checks it before the handlers. */
export type InternalRoute = ExpressRoute & { scope: InternalScope };

/** `POST <path>` on one account (`:tenant`, `:client_id`) whose body is empty or `{actor}`: answers what `run` resolves to, never cached. */
export function accountActionRoute(
  path: string,
  run: (tenant: string, clientId: string) => Promise<unknown>,
): InternalRoute {
  return {
    method: 'POST',
    path,
    scope: 'admin',
    input: { body: { type: 'json', fields: fieldsOf(ActorBodySchema) } },
    handlers: [
      optionalJsonBody,
      async (req, res) => {
        const tenant = tenantOf(req);
        const clientId = idOf(req, 'client_id');
        ActorBodySchema.parse(req.body, REPORT_INPUT);
        noStore(res).json(await run(tenant, clientId));
      },
    ],
  };
}
