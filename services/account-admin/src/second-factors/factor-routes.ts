import { type ExpressRoute, fieldsOf, jsonBody, type Route } from '@plant/shared/http';
import { assertUuid, PeopleSettingsBody } from './factor-validators.js';
import {
  getPeopleSettings,
  listMyFactors,
  listUserFactors,
  removeMyFactor,
  resetUserFactors,
  updatePeopleSettings,
  type FactorDeps,
} from './managed-factors.js';
import { actorOf, conditional, etagged, noStore, requestMeta } from '../platform/index.js';

/**
 * Second factors and the people policy (`base` is `/api/v1`): a person's own factors
 * (`/me/factors`), an Account Admin's view and reset of another person's, and the tenant's
 * policy (`/settings/people`). Enrolment is not here: it happens at the realm, where the
 * ceremony's origin is (docs/decisions/0015-people-and-second-factors.md).
 *
 * The policy answers its revision as its `ETag` and its change may be conditional on it; a
 * factor is never changed, so its removal may be conditional on its constant `"v1"`, and one
 * that lost the race to another removal is 412 (docs/decisions/0045-etag-on-the-policy-and-invitations.md).
 */
export function factorRoutes(deps: FactorDeps, base: string): Route[] {
  const userOf = (id: unknown) => {
    const value = String(id);
    assertUuid(value, 'User');
    return value;
  };
  return [
    {
      method: 'GET',
      path: `${base}/me/factors`,
      handlers: [
        async (req, res) => {
          noStore(res).json(await listMyFactors(deps, actorOf(req)));
        },
      ],
    },
    conditional<ExpressRoute>({
      method: 'DELETE',
      path: `${base}/me/factors/:factor_id`,
      handlers: [
        async (req, res) => {
          const factorId = String(req.params.factor_id);
          assertUuid(factorId, 'Factor');
          await removeMyFactor(deps, actorOf(req), requestMeta(req), factorId);
          noStore(res).status(204).end();
        },
      ],
    }),
    {
      method: 'GET',
      path: `${base}/users/:id/factors`,
      handlers: [
        async (req, res) => {
          noStore(res).json(await listUserFactors(deps, actorOf(req), userOf(req.params.id)));
        },
      ],
    },
    {
      method: 'DELETE',
      path: `${base}/users/:id/factors`,
      handlers: [
        async (req, res) => {
          const userId = userOf(req.params.id);
          noStore(res).json(await resetUserFactors(deps, actorOf(req), requestMeta(req), userId));
        },
      ],
    },
    {
      method: 'GET',
      path: `${base}/settings/people`,
      handlers: [
        async (req, res) => {
          noStore(res).json(etagged(res, await getPeopleSettings(deps, actorOf(req))));
        },
      ],
    },
    conditional<ExpressRoute>({
      method: 'PATCH',
      path: `${base}/settings/people`,
      input: { body: { type: 'json', fields: fieldsOf(PeopleSettingsBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = PeopleSettingsBody.parse(req.body);
          const policy = await updatePeopleSettings(deps, actorOf(req), requestMeta(req), input);
          noStore(res).json(etagged(res, policy));
        },
      ],
    }),
  ];
}
