import {
  errorResponses,
  JSON_BODY_ERRORS,
  jsonRequestBody,
  jsonResponse,
  type OpenAPIRegistry,
} from '@plant/shared/http';
import { z } from 'zod';
import { FactorPath, PeopleSettingsBody, UserPath } from './factor-validators.js';

const FactorSchema = z.object({
  id: z.string().describe('The factor id (UUID)'),
  kind: z.enum(['passkey', 'totp']),
  label: z.string(),
  created_at: z.string().describe('ISO 8601'),
  last_used_at: z.string().nullable().describe('ISO 8601; the last sign-in it verified'),
});
const FactorsSchema = z.object({
  factors: z.array(FactorSchema),
  recovery_codes_left: z.number().int().describe('Unused recovery codes of the current set'),
});
const PeopleSettingsSchema = z.object({
  require_admin_second_factor: z
    .boolean()
    .describe('An Account Admin must hold a second factor (enrolled at their next sign-in)'),
});

const stepUp =
  'Your second factor is needed again (RFC 9470 WWW-Authenticate: insufficient_user_authentication, acr_values, max_age=600)';

const unknown = 'Unknown in this tenant';
const nothingToReset = 'The person has no factor and no recovery code to reset';

/** The documented factor and people-policy operations. */
export function registerFactorOperations(
  registry: OpenAPIRegistry,
  { common, management }: { common: Record<number, string>; management: Record<number, string> },
): void {
  registry.registerPath({
    method: 'get',
    path: '/me/factors',
    summary: 'My second factors (passkeys, authenticator app) and recovery codes left',
    operationId: 'listMyFactors',
    responses: {
      200: jsonResponse('My factors', FactorsSchema),
      ...errorResponses({ 403: 'A service account has no factors', ...common }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/me/factors/{factor_id}',
    summary:
      'Remove one of my factors (the last one takes the recovery codes with it); every session of mine ends, this one too, and where the tenant requires a factor my next sign-in enrols one',
    operationId: 'removeMyFactor',
    request: { params: FactorPath },
    responses: {
      204: { description: 'Removed' },
      ...errorResponses({ 404: 'Not one of my factors', ...common, 401: stepUp }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/users/{id}/factors',
    summary: "A person's second factors (Account Admin)",
    operationId: 'listUserFactors',
    request: { params: UserPath },
    responses: {
      200: jsonResponse("The person's factors", FactorsSchema),
      ...errorResponses({ 404: 'Unknown in this tenant', ...management }),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/users/{id}/factors',
    summary:
      "Reset a person's second factors: every factor and recovery code goes and their sessions end (Account Admin, audited)",
    operationId: 'resetUserFactors',
    request: { params: UserPath },
    responses: {
      200: jsonResponse(
        'Reset',
        z.object({ removed: z.number().int().describe('Factors removed') }),
      ),
      ...errorResponses({ 404: unknown, 409: nothingToReset, ...management, 401: stepUp }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/settings/people',
    summary: "The tenant's people policy (Account Admin)",
    operationId: 'getPeopleSettings',
    responses: {
      200: jsonResponse('The policy', PeopleSettingsSchema),
      ...errorResponses(management),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/settings/people',
    summary: 'Require a second factor of Account Admins, or not (Account Admin, audited)',
    operationId: 'updatePeopleSettings',
    request: { body: jsonRequestBody(PeopleSettingsBody) },
    responses: {
      200: jsonResponse('The policy now', PeopleSettingsSchema),
      ...errorResponses({
        400: 'Invalid body',
        ...JSON_BODY_ERRORS,
        ...management,
        401: stepUp,
      }),
    },
  });
}
