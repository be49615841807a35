/**
 * The Plant Store's OpenAPI 3.1 document (interface version 1.0.0), served at
 * `GET /openapi.json`. Generated from the schemas the routes validate with (`NewPlantSchema`
 * for the body, `ListPlantsQuery` for the query) and the response shapes (`PlantSchema`,
 * `ErrorSchema`); test/openapi-contract.test.ts gives the routes' parsers and the generated
 * document the same inputs at and around every bound.
 */
import { NewPlantSchema, PlantSchema } from '@plant/shared/api';
import {
  BEARER_JWT,
  errorResponse,
  errorResponses,
  generateApiDocument,
  JSON_BODY_ERRORS,
  jsonPageResponse,
  jsonRequestBody,
  jsonResponse,
  OpenAPIRegistry,
  type OpenApiDocument,
} from '@plant/shared/http';
import { ListPlantsQuery } from '../../domain/plant-validators.js';

const challenge = {
  'WWW-Authenticate': {
    description:
      'RFC 6750 challenge: `Bearer realm="plants"`, with `error="invalid_token"` when a token was sent; for a DPoP-bound token or a ' +
      'DPoP proof, RFC 9449\'s `DPoP realm="plants", error="invalid_token" | "invalid_dpop_proof" | "use_dpop_nonce", algs="ES256 EdDSA Ed25519"`',
    schema: { type: 'string' as const },
  },
};

const authErrors = {
  401: errorResponse(
    'No bearer token, or an invalid, expired or revoked one; a DPoP-bound token sent as Bearer; a missing, stale, replayed or mismatched DPoP proof (a nonce to use comes in `DPoP-Nonce`)',
    challenge,
  ),
  403: errorResponse(
    'The token is valid but lacks the role or grant (`error="insufficient_scope"`)',
    challenge,
  ),
  503: 'Token verification or the database is temporarily unavailable',
};

/** The documented operations, each registered with the schema objects its route validates with. */
export function plantStoreOperations(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerPath({
    method: 'post',
    path: '/plants',
    operationId: 'addPlant',
    summary: 'Create a plant',
    description: "Needs the Edit role, or an `edit` grant on the plant's tag.",
    request: { body: jsonRequestBody(NewPlantSchema) },
    responses: {
      200: jsonResponse('The plant as stored', PlantSchema),
      ...errorResponses({
        400: 'Invalid input (malformed JSON, wrong types, missing or out-of-bounds fields)',
        ...authErrors,
        409: 'The tenant already has a plant with this id',
        ...JSON_BODY_ERRORS,
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/plants',
    operationId: 'findPlants',
    summary: 'List plants',
    description:
      "The plants of the caller's tenant in ascending id order. When more exist than `limit`, a " +
      '`Link: <...>; rel="next"` header (RFC 8288) carries the URL of the next page.',
    request: { query: ListPlantsQuery },
    responses: {
      200: jsonPageResponse(
        'A page of plants',
        PlantSchema,
        '`<{base_url}/plants?limit=N&cursor=...>; rel="next"` when more results exist',
      ),
      ...errorResponses({ 400: 'Invalid limit or cursor', ...authErrors }),
    },
  });
  return registry;
}

export function openApiDocument(publicUrl: string): OpenApiDocument {
  return generateApiDocument(plantStoreOperations(), {
    title: 'Plant Store',
    version: '1.0.0',
    description:
      'Create and list the plants of your tenant. Every call needs `Authorization: Bearer <access token>` ' +
      'obtained with the client credentials grant of a service account; a DPoP-bound token (RFC 9449, `token_type: DPoP`) goes as ' +
      '`Authorization: DPoP <access token>` with a `DPoP` proof for the call (`htu` = this server URL plus the path).',
    serverUrl: publicUrl,
    securitySchemes: {
      bearerAuth: BEARER_JWT,
      dpopAuth: {
        type: 'http',
        scheme: 'DPoP',
        bearerFormat: 'JWT',
        description: 'RFC 9449: the DPoP scheme, with a DPoP proof header on every call',
      },
    },
  });
}
