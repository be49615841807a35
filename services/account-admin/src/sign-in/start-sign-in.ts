/**
 * GET /login?tenant=<t>[&return_to=/path], a short pipeline: the tenant asked for, a point of the
 * start budget, the tenant's existence at the token service, then the redirect to its realm.
 * Each step answers the browser itself when the sign-in stops there.
 */
import { isTenantName } from '@plant/shared/api';
import type { Request, Response } from 'express';
import { TokenServiceUnavailable } from '../platform/index.js';
import { sendPage } from '../portal/index.js';
import { safeReturnTo } from './return-to.js';
import {
  redirectToRealm,
  takeStartBudget,
  unavailablePage,
  type SignInContext,
} from './sign-in-flow.js';
import { tenantPickerPage } from './sign-in-pages.js';

export async function startSignIn(ctx: SignInContext, req: Request, res: Response): Promise<void> {
  const returnTo = safeReturnTo(req.query.return_to);
  const tenant = tenantToSignInTo(req, res, returnTo);
  if (tenant === undefined) return;
  if (!(await takeStartBudget(ctx, req, res))) return;
  if (!(await tenantExists(ctx, res, tenant, returnTo))) return;
  await redirectToRealm(ctx, res, { tenant, returnTo, purpose: 'sign-in' }, {});
}

/** The tenant named in the query, normalised; none or a malformed one: the picker (again). */
function tenantToSignInTo(req: Request, res: Response, returnTo: string): string | undefined {
  const tenantParam = req.query.tenant;
  if (tenantParam === undefined || tenantParam === '') {
    sendPage(res, 200, tenantPickerPage({ returnTo }));
    return undefined;
  }
  const tenant = typeof tenantParam === 'string' ? tenantParam.trim().toLowerCase() : '';
  if (!isTenantName(tenant)) {
    sendPage(
      res,
      400,
      tenantPickerPage({
        error: 'Tenant names are 1 to 63 lower-case letters, digits and inner hyphens.',
        tenant: typeof tenantParam === 'string' ? tenantParam.slice(0, 63) : '',
        returnTo,
      }),
    );
    return undefined;
  }
  return tenant;
}

/** Whether the token service knows the tenant; unknown: the picker says so, unreachable: 503. */
async function tenantExists(
  { deps }: SignInContext,
  res: Response,
  tenant: string,
  returnTo: string,
): Promise<boolean> {
  try {
    await deps.tokenService.getTenant(tenant);
    return true;
  } catch (err) {
    if (err instanceof TokenServiceUnavailable) {
      sendPage(res, 503, unavailablePage());
      return false;
    }
    sendPage(
      res,
      404,
      tenantPickerPage({
        error: `There is no Plant Store tenant named “${tenant}”. Check the name and try again.`,
        tenant,
        returnTo,
      }),
    );
    return false;
  }
}
