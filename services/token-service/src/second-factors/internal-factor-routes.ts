import { fieldsOf, jsonBody } from '@plant/shared/http';
import {
  ActorBodySchema,
  type IdentityContext,
  idOf,
  noStore,
  REPORT_INPUT,
  tenantOf,
  type InternalRoute,
  optionalJsonBody,
} from '../platform/index.js';
import { FactorPolicySchema } from '../service-accounts/index.js';
import {
  getFactorPolicy,
  listFactors,
  removeFactor,
  resetFactors,
  setFactorPolicy,
} from './second-factors.js';

/**
 * A person's second factors and the realm's policy, for account-admin (scope `admin`): list,
 * remove one, reset all (an Account Admin's, audited there too), and `require_admin_factor`.
 * The `actor` of a change is recorded in the realm's security events.
 */
export function factorRoutes(
  identity: Pick<IdentityContext, 'userFactors' | 'publisher'>,
  base: string,
): InternalRoute[] {
  const deps = { identity };
  const factors = `${base}/users/:id/factors`;
  const actorOf = (body: unknown) => ({
    sub: ActorBodySchema.parse(body, REPORT_INPUT).actor ?? null,
  });
  return [
    {
      method: 'GET',
      path: factors,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          noStore(res).json(await listFactors(deps, tenantOf(req), idOf(req, 'id')));
        },
      ],
    },
    {
      method: 'DELETE',
      path: factors,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(ActorBodySchema) } },
      handlers: [
        optionalJsonBody,
        async (req, res) => {
          const [tenant, sub] = [tenantOf(req), idOf(req, 'id')];
          noStore(res).json(await resetFactors(deps, { tenant, sub, actor: actorOf(req.body) }));
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${factors}/:factor_id`,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(ActorBodySchema) } },
      handlers: [
        optionalJsonBody,
        async (req, res) => {
          const [tenant, sub, factorId] = [tenantOf(req), idOf(req, 'id'), idOf(req, 'factor_id')];
          await removeFactor(deps, { tenant, sub, factorId, actor: actorOf(req.body) });
          res.status(204).end();
        },
      ],
    },
    {
      method: 'GET',
      path: `${base}/factor-policy`,
      scope: 'admin',
      handlers: [
        async (req, res) => {
          noStore(res).json(await getFactorPolicy(deps, tenantOf(req)));
        },
      ],
    },
    {
      method: 'PUT',
      path: `${base}/factor-policy`,
      scope: 'admin',
      input: { body: { type: 'json', fields: fieldsOf(FactorPolicySchema) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const tenant = tenantOf(req);
          const input = FactorPolicySchema.parse(req.body, REPORT_INPUT);
          noStore(res).json(
            await setFactorPolicy(deps, {
              tenant,
              requireAdminFactor: input.require_admin_factor,
              actor: { sub: input.actor ?? null },
            }),
          );
        },
      ],
    },
  ];
}
