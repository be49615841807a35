import {
  type IdentityContext,
  idOf,
  noStore,
  tenantOf,
  type InternalRoute,
} from '../platform/index.js';
import {
  CHANGES_QUERY,
  getRevocationChanges,
  getRevocationEntry,
  getRevocationSnapshot,
  parseChangesQuery,
} from './revocation-feed.js';

/** The revocation change feed every resource-server replica polls (platform/internal-app.ts keeps its answers out of the access log). */
export const REVOCATION_CHANGES_PATH = '/internal/v1/revocations/changes';

/** What every resource server reads to verify tokens (`verify`): one principal, the snapshot, the changes. */
export function revocationRoutes(
  identity: IdentityContext,
  accessTokenTtl: number,
  base: string,
): InternalRoute[] {
  return [
    {
      method: 'GET',
      path: `${base}/principals/:sub`,
      scope: 'verify',
      handlers: [
        async (req, res) => {
          noStore(res).json(
            await getRevocationEntry(identity, accessTokenTtl, tenantOf(req), idOf(req, 'sub')),
          );
        },
      ],
    },
    {
      method: 'GET',
      path: '/internal/v1/revocations',
      scope: 'verify',
      handlers: [
        async (_req, res) => {
          noStore(res).json(await getRevocationSnapshot(identity, accessTokenTtl));
        },
      ],
    },
    {
      method: 'GET',
      path: REVOCATION_CHANGES_PATH,
      scope: 'verify',
      input: { query: CHANGES_QUERY },
      handlers: [
        async (req, res) => {
          const { after, limit } = parseChangesQuery(req.query);
          noStore(res).json(await getRevocationChanges(identity, accessTokenTtl, after, limit));
        },
      ],
    },
  ];
}
