/**
 * The Plant Store's OpenAPI 3.1 document (interface version 1.0.0), served at
 * `GET /openapi.json`. The shapes follow the seed field for field; the bounds come from
 * the same constants the validators use, and the component tests validate every
 * response body against this document.
 */
import { PLANT_NAME_MAX, PLANT_TAG_MAX } from '@plant/shared';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../../domain/plant-validators.js';

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const challenge = {
  'WWW-Authenticate': {
    description: 'RFC 6750 challenge: `Bearer realm="plants"`, with `error="invalid_token"` when a token was sent',
    schema: { type: 'string' },
  },
};

const authErrors = {
  '401': { ...errorResponse('No bearer token, or an invalid, expired or revoked one'), headers: challenge },
  '403': {
    ...errorResponse('The token is valid but lacks the role or grant (`error="insufficient_scope"`)'),
    headers: challenge,
  },
  '503': errorResponse('Token verification or the database is temporarily unavailable'),
};

export function openApiDocument(publicUrl: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Plant Store',
      version: '1.0.0',
      description:
        'Create and list the plants of your tenant. Every call needs `Authorization: Bearer <access token>` ' +
        'obtained with the client credentials grant of a service account.',
    },
    servers: [{ url: publicUrl }],
    security: [{ bearerAuth: [] }],
    paths: {
      '/plants': {
        post: {
          operationId: 'addPlant',
          summary: 'Create a plant',
          description: 'Needs the Edit role, or an `edit` grant on the plant\'s tag.',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
          },
          responses: {
            '200': {
              description: 'The plant as stored',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Plant' } } },
            },
            '400': errorResponse('Invalid input (malformed JSON, wrong types, missing or out-of-bounds fields)'),
            ...authErrors,
            '409': errorResponse('The tenant already has a plant with this id'),
            '413': errorResponse('The body is larger than 16 KiB'),
            '415': errorResponse('The body is not application/json'),
          },
        },
        get: {
          operationId: 'findPlants',
          summary: 'List plants',
          description:
            'The plants of the caller\'s tenant in ascending id order. When more exist than `limit`, a ' +
            '`Link: <...>; rel="next"` header (RFC 8288) carries the URL of the next page.',
          parameters: [
            {
              name: 'limit',
              in: 'query',
              required: false,
              description: 'Maximum number of results to return',
              schema: { type: 'integer', format: 'int32', minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT },
            },
            {
              name: 'cursor',
              in: 'query',
              required: false,
              description: 'Opaque position from a previous page\'s `Link` header',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': {
              description: 'A page of plants',
              headers: {
                Link: {
                  description: '`<{base_url}/plants?limit=N&cursor=...>; rel="next"` when more results exist',
                  schema: { type: 'string' },
                },
              },
              content: {
                'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Plant' } } },
              },
            },
            '400': errorResponse('Invalid limit or cursor'),
            ...authErrors,
          },
        },
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
      schemas: {
        NewPlant: {
          type: 'object',
          required: ['id', 'name'],
          properties: {
            id: { type: 'integer', format: 'int64', description: 'Identification number of the plant' },
            name: { type: 'string', minLength: 1, maxLength: PLANT_NAME_MAX, description: 'The name of the plant' },
            tag: { type: 'string', minLength: 1, maxLength: PLANT_TAG_MAX, description: 'Tag that specifies the type' },
          },
        },
        Plant: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', description: 'The name of the plant' },
            tag: { type: 'string', description: 'Tag that specifies the type' },
          },
          additionalProperties: false,
        },
        Error: {
          type: 'object',
          required: ['error', 'message'],
          properties: {
            error: { type: 'integer', format: 'int32', description: 'The HTTP status' },
            message: { type: 'string' },
          },
          additionalProperties: false,
        },
      },
    },
  };
}
