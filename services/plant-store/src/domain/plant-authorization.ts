/**
 * Who may do what with plants (DESIGN.md, "Principals, roles, permissions"): every role
 * may list; Edit and Account Admin may create any plant; a principal with an `edit`
 * grant on a tag may create plants of exactly that tag.
 */
import { hasEditGrant, hasRole, InsufficientScope, type Principal } from '@plant/resource-auth';

/** The `realm` of the Plant Store's `WWW-Authenticate` challenges. */
export const PLANTS_REALM = 'plants';

export function assertMayListPlants(principal: Principal): void {
  if (!hasRole(principal, 'View')) throw new InsufficientScope(PLANTS_REALM, 'Listing plants needs the View role or above');
}

export function assertMayCreatePlant(principal: Principal, tag: string | undefined): void {
  if (hasRole(principal, 'Edit')) return;
  if (tag !== undefined && hasEditGrant(principal, tag)) return;
  throw new InsufficientScope(
    PLANTS_REALM,
    tag === undefined
      ? 'Creating a plant needs the Edit role (or an edit grant on its tag)'
      : 'Creating a plant needs the Edit role or an edit grant on its tag',
  );
}
