/**
 * The OpenAPI document against the routes' own validation. The document is generated from the
 * schema objects the routes parse with, and for inputs at and around every documented bound
 * the document (checked with ajv, as a client's validator would) and the route's parser must
 * give the same verdict; each case also states the verdict, so two parsers that both refuse
 * everything cannot pass.
 */
import { SetDelegationsBody } from '../src/service-accounts/delegation-routes.js';
import { describe, expect, test } from '@jest/globals';
import { BadRequest } from '@plant/shared/api';
import { parseJsonLossless } from '@plant/shared/http';
import { MAX_GRANTS } from '@plant/shared/token-service-client';
import { AuditEventsQuery, parseAuditLimit } from '../src/audit/audit-event-validators.js';
import {
  AddKeyBody,
  AddTrustBody,
  isKeyId,
  isTrustId,
  ServiceAccountKeyPath,
  ServiceAccountSecretPath,
  ServiceAccountTrustPath,
} from '../src/service-accounts/service-account-credential-validators.js';
import {
  CreateServiceAccountBody,
  isClientId,
  ServiceAccountPath,
  UpdateServiceAccountBody,
} from '../src/service-accounts/service-account-validators.js';
import { accountAdminOperations } from '../src/http/openapi.js';
import { document, documentSchema, schemaErrors } from './helpers/openapi-check.js';

const operations = accountAdminOperations().definitions.flatMap((d) =>
  d.type === 'route' ? [d.route] : [],
);
const operation = (method: string, path: string) =>
  operations.find((r) => r.method === method && r.path === path);
const bodySchemaOf = (method: string, path: string) =>
  (
    operation(method, path)?.request?.body?.content['application/json'] as
      | { schema?: unknown }
      | undefined
  )?.schema;
const grants = (n: number) =>
  JSON.stringify(Array.from({ length: n }, (_, i) => ({ tag: `t${i}`, permission: 'edit' })));

test('When the operations are registered, then each carries the schema object its route parses with', () => {
  expect(bodySchemaOf('post', '/service-accounts')).toBe(CreateServiceAccountBody);
  expect(bodySchemaOf('patch', '/service-accounts/{client_id}')).toBe(UpdateServiceAccountBody);
  expect(operation('get', '/audit-events')?.request?.query).toBe(AuditEventsQuery);
  expect(bodySchemaOf('post', '/service-accounts/{client_id}/keys')).toBe(AddKeyBody);
  expect(bodySchemaOf('post', '/service-accounts/{client_id}/trusts')).toBe(AddTrustBody);
  expect(bodySchemaOf('put', '/service-accounts/{client_id}/delegations')).toBe(SetDelegationsBody);
  const withClientId = operations.filter((r) => r.path.includes('{client_id}'));
  expect(withClientId.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
    'delete /service-accounts/{client_id}',
    'delete /service-accounts/{client_id}/keys/{key_id}',
    'delete /service-accounts/{client_id}/secret',
    'delete /service-accounts/{client_id}/secrets/{secret_id}',
    'delete /service-accounts/{client_id}/trusts/{trust_id}',
    'get /service-accounts/{client_id}',
    'get /service-accounts/{client_id}/credentials',
    'get /service-accounts/{client_id}/delegations',
    'patch /service-accounts/{client_id}',
    'post /service-accounts/{client_id}/disable',
    'post /service-accounts/{client_id}/enable',
    'post /service-accounts/{client_id}/keys',
    'post /service-accounts/{client_id}/reset-secret',
    'post /service-accounts/{client_id}/secrets',
    'post /service-accounts/{client_id}/trusts',
    'put /service-accounts/{client_id}/delegations',
  ]);
  const pathOf: Record<string, unknown> = {
    key_id: ServiceAccountKeyPath,
    trust_id: ServiceAccountTrustPath,
    secret_id: ServiceAccountSecretPath,
  };
  for (const route of withClientId)
    expect(route.request?.params).toBe(
      pathOf[/\{(key_id|trust_id|secret_id)\}/.exec(route.path)?.[1] ?? ''] ?? ServiceAccountPath,
    );
});

test('When a response lacks a field or carries a wrong type, then the schema check reports it (the check can fail)', () => {
  expect(
    schemaErrors('ServiceAccount', {
      name: 'x',
      client_id: 'sa-1',
      role: 'Admin',
      grants: [],
      created_at: '2026-01-01T00:00:00Z',
      created_by: null,
    }),
  ).not.toEqual([]);
});

describe('the credential routes', () => {
  test.each([
    ['a JWK', '{"jwk":{"kty":"EC"}}', true],
    ['a PEM', '{"pem":"-----BEGIN PUBLIC KEY-----"}', true],
    ['both', '{"jwk":{},"pem":"x"}', false],
    ['neither', '{}', false],
    ['a JWK that is a string', '{"jwk":"x"}', false],
    ['a PEM over 8192 characters', `{"pem":"${'x'.repeat(8193)}"}`, false],
    ['an unknown field', '{"pem":"x","kid":"y"}', false],
  ])('When a key body has %s, then the route and the document agree', (_case, text, accepted) => {
    const documented = documentSchema(
      'paths',
      '/service-accounts/{client_id}/keys',
      'post',
      'requestBody',
      'content',
      'application/json',
      'schema',
    );
    const route = AddKeyBody.safeParse(parseJsonLossless(text)).success;
    expect({ route, document: documented(JSON.parse(text)) }).toEqual({
      route: accepted,
      document: accepted,
    });
  });

  test.each([
    ['all three', '{"issuer":"https://i.example","subject":"s","audience":"a"}', true],
    [
      'a subject at 512 characters',
      `{"issuer":"https://i.example","subject":"${'s'.repeat(512)}","audience":"a"}`,
      true,
    ],
    [
      'a subject over 512 characters',
      `{"issuer":"https://i.example","subject":"${'s'.repeat(513)}","audience":"a"}`,
      false,
    ],
    ['no audience', '{"issuer":"https://i.example","subject":"s"}', false],
    ['an empty issuer', '{"issuer":"","subject":"s","audience":"a"}', false],
    [
      'an unknown field',
      '{"issuer":"https://i.example","subject":"s","audience":"a","id":"x"}',
      false,
    ],
  ])('When a trust body has %s, then the route and the document agree', (_case, text, accepted) => {
    const documented = documentSchema(
      'paths',
      '/service-accounts/{client_id}/trusts',
      'post',
      'requestBody',
      'content',
      'application/json',
      'schema',
    );
    const route = AddTrustBody.safeParse(parseJsonLossless(text)).success;
    expect({ route, document: documented(JSON.parse(text)) }).toEqual({
      route: accepted,
      document: accepted,
    });
  });

  test.each([
    ['key_id', 'ci-2026', true, isKeyId],
    ['key_id', 'a/b', false, isKeyId],
    ['key_id', 'x'.repeat(129), false, isKeyId],
    ['trust_id', 'trust-0123456789abcdef', true, isTrustId],
    ['trust_id', 'trust-xyz', false, isTrustId],
  ])(
    'When the path %s is %s, then the parser and the document agree',
    (name, value, accepted, parser) => {
      const path =
        name === 'key_id'
          ? '/service-accounts/{client_id}/keys/{key_id}'
          : '/service-accounts/{client_id}/trusts/{trust_id}';
      const documented = documentSchema('paths', path, 'delete', 'parameters', '1', 'schema');
      expect({ parser: parser(value), document: documented(value) }).toEqual({
        parser: accepted,
        document: accepted,
      });
    },
  );
});

describe('POST /service-accounts', () => {
  const documented = documentSchema(
    'paths',
    '/service-accounts',
    'post',
    'requestBody',
    'content',
    'application/json',
    'schema',
  );

  test.each([
    ['a name', '{"name":"ci-bot"}', true],
    ['name at 64 characters', `{"name":"${'x'.repeat(64)}"}`, true],
    ['name at 64 emoji (code points)', `{"name":"${'🌵'.repeat(64)}"}`, true],
    ['inner and outer spaces', '{"name":" ci bot "}', true],
    ['name over 64 characters', `{"name":"${'x'.repeat(65)}"}`, false],
    ['empty name', '{"name":""}', false],
    ['blank name', '{"name":" \\u00a0 "}', false],
    ['control character', '{"name":"a\\u0007b"}', false],
    ['C1 control character', '{"name":"a\\u009b"}', false],
    ['numeric name', '{"name":5}', false],
    ['null name', '{"name":null}', false],
    ['no name', '{}', false],
    ['an unknown field', '{"name":"a","role":"Edit"}', false],
    ['an array', '[]', false],
  ])('When the body has %s, then the route and the document agree', (_case, text, accepted) => {
    const route = CreateServiceAccountBody.safeParse(parseJsonLossless(text)).success;
    expect({ route, document: documented(JSON.parse(text)) }).toEqual({
      route: accepted,
      document: accepted,
    });
  });
});

describe('PATCH /service-accounts/{client_id}', () => {
  const documented = documentSchema(
    'paths',
    '/service-accounts/{client_id}',
    'patch',
    'requestBody',
    'content',
    'application/json',
    'schema',
  );

  test.each([
    ['role View', '{"role":"View"}', true],
    ['role Edit and grants', '{"role":"Edit","grants":[{"tag":"a","permission":"edit"}]}', true],
    ['no grants', '{"grants":[]}', true],
    [`${MAX_GRANTS} grants`, `{"grants":${grants(MAX_GRANTS)}}`, true],
    [
      'a tag at 64 characters',
      `{"grants":[{"tag":"${'x'.repeat(64)}","permission":"edit"}]}`,
      true,
    ],
    [`${MAX_GRANTS + 1} grants`, `{"grants":${grants(MAX_GRANTS + 1)}}`, false],
    [
      'a tag over 64 characters',
      `{"grants":[{"tag":"${'x'.repeat(65)}","permission":"edit"}]}`,
      false,
    ],
    [
      'a repeated tag',
      '{"grants":[{"tag":"a","permission":"edit"},{"tag":"a","permission":"edit"}]}',
      false,
    ],
    ['a blank tag', '{"grants":[{"tag":" ","permission":"edit"}]}', false],
    ['another permission', '{"grants":[{"tag":"a","permission":"read"}]}', false],
    ['a grant without permission', '{"grants":[{"tag":"a"}]}', false],
    ['a grant with an unknown field', '{"grants":[{"tag":"a","permission":"edit","x":1}]}', false],
    ['grants not an array', '{"grants":{"tag":"a","permission":"edit"}}', false],
    ['role Account Admin', '{"role":"Account Admin"}', false],
    ['null role', '{"role":null}', false],
    ['neither role nor grants', '{}', false],
    ['an unknown field', '{"name":"x"}', false],
  ])('When the body has %s, then the route and the document agree', (_case, text, accepted) => {
    const route = UpdateServiceAccountBody.safeParse(parseJsonLossless(text)).success;
    expect({ route, document: documented(JSON.parse(text)) }).toEqual({
      route: accepted,
      document: accepted,
    });
  });
});

describe('{client_id}', () => {
  const documented = documentSchema(
    'paths',
    '/service-accounts/{client_id}',
    'get',
    'parameters',
    '0',
    'schema',
  );

  test.each([
    ['an issued client_id', 'sa-0123abcd', true],
    ['every allowed character', 'A.b_c-9', true],
    ['128 characters', 'x'.repeat(128), true],
    ['129 characters', 'x'.repeat(129), false],
    ['nothing', '', false],
    ['a space', 'a b', false],
    ['a slash', 'a/b', false],
    ['a letter outside ASCII', 'é', false],
  ])('When the path id is %s, then isClientId and the document agree', (_case, id, accepted) => {
    expect({ route: isClientId(id), document: documented(id) }).toEqual({
      route: accepted,
      document: accepted,
    });
  });
});

describe('GET /audit-events', () => {
  const limitSchema = documentSchema('paths', '/audit-events', 'get', 'parameters', '0', 'schema');
  const parameters = (document.paths?.['/audit-events']?.get?.parameters ?? []) as {
    name: string;
    required: boolean;
    schema: { default?: unknown };
  }[];

  test('When limit is absent, then the route takes the documented default; cursor is optional', () => {
    expect(parameters.map((p) => [p.name, p.required])).toEqual([
      ['limit', false],
      ['cursor', false],
    ]);
    expect(parseAuditLimit({})).toBe(parameters[0]?.schema.default);
  });

  test.each([
    [1, true],
    [50, true],
    [100, true],
    [0, false],
    [-1, false],
    [101, false],
    [1.5, false],
  ])('When limit is %s, then the route and the document agree', (value, accepted) => {
    let route = true;
    try {
      parseAuditLimit({ limit: String(value) });
    } catch (err) {
      if (!(err instanceof BadRequest)) throw err;
      route = false;
    }
    expect({ route, document: limitSchema(value) }).toEqual({
      route: accepted,
      document: accepted,
    });
  });
});
