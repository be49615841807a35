/**
 * Who may do what with plants (docs/specification.md, "Principals, roles, credentials"): every role
 * may list; Edit and Account Admin may create any plant; a principal with an `edit`
 * grant on a tag may create plants of exactly that tag. The token's scope narrows this and
 * never widens it (`@plant/resource-auth`'s `hasRole`/`hasEditGrant`): listing needs
 * `plants:read` in the token's scope, creating `plants:write`, whatever the role or grants.
 */
import {
  editGrantRefusal,
  InsufficientScope,
  type Principal,
  roleRefusal,
} from '@plant/resource-auth';

/** The `realm` of the Plant Store's `WWW-Authenticate` challenges. */
export const PLANTS_REALM = 'plants';

export function assertMayListPlants(principal: Principal): void {
  const refusal = roleRefusal(principal, 'View');
  if (refusal === 'role')
    throw new InsufficientScope(PLANTS_REALM, 'Listing plants needs the View role or above');
  if (refusal === 'scope')
    throw new InsufficientScope(
      PLANTS_REALM,
      "Listing plants needs the plants:read scope; the token's scope is narrower",
    );
}

export function assertMayCreatePlant(principal: Principal, tag: string | undefined): void {
  const byRole = roleRefusal(principal, 'Edit');
  if (byRole === undefined) return;
  const byGrant = tag === undefined ? 'grant' : editGrantRefusal(principal, tag);
  if (byGrant === undefined) return;
  // The role or grant is there and only the token was narrowed: say so, the caller can ask for plants:write.
  if (byRole === 'scope' || byGrant === 'scope') {
    throw new InsufficientScope(
      PLANTS_REALM,
      "Creating a plant needs the plants:write scope; the token's scope is narrower",
    );
  }
  throw new InsufficientScope(
    PLANTS_REALM,
    tag === undefined
      ? 'Creating a plant needs the Edit role (or an edit grant on its tag)'
      : 'Creating a plant needs the Edit role or an edit grant on its tag',
  );
}
