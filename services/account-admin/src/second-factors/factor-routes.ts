import { fieldsOf, jsonBody, type Route } from '@plant/shared/http';
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
import { actorOf, noStore, requestMeta } from '../platform/index.js';

/**
 * Second factors and the people policy (`base` is `/api/v1`): a person's own factors
 * (`/me/factors`), an Account Admin's view and reset of another person's, and the tenant's
 * policy (`/settings/people`). Enrolment is not here: it happens at the realm, where the
 * ceremony's origin is (docs/decisions/0015-people-and-second-factors.md).
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
    {
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
    },
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
          noStore(res).json(await getPeopleSettings(deps, actorOf(req)));
        },
      ],
    },
    {
      method: 'PATCH',
      path: `${base}/settings/people`,
      input: { body: { type: 'json', fields: fieldsOf(PeopleSettingsBody) } },
      handlers: [
        jsonBody(),
        async (req, res) => {
          const input = PeopleSettingsBody.parse(req.body);
          noStore(res).json(
            await updatePeopleSettings(deps, actorOf(req), requestMeta(req), input),
          );
        },
      ],
    },
  ];
}
