/**
 * The OpenAPI document against the routes' own validation. The document is generated from the
 * schema objects the routes parse with, and for inputs at and around every documented bound
 * the document (checked with ajv, as a client's validator would) and the route's parser must
 * give the same verdict; each case also states the verdict, so two parsers that both refuse
 * everything cannot pass.
 */
import { describe, expect, test } from '@jest/globals';
import { BadRequest, NewPlantSchema } from '@plant/shared/api';
import { parseJsonLossless } from '@plant/shared/http';
import {
  encodeCursor,
  ListPlantsQuery,
  parseCursor,
  parseLimit,
  parseNewPlant,
} from '../src/domain/plant-validators.js';
import { openApiDocument, plantStoreOperations } from '../src/entry-points/api/openapi.js';
import { documentSchemas } from './helpers/openapi-validator.js';

const doc = openApiDocument('http://plants.test');
const schemaAt = documentSchemas(doc);
const operation = (method: string) =>
  plantStoreOperations().definitions.flatMap((d) =>
    d.type === 'route' && d.route.path === '/plants' && d.route.method === method ? [d.route] : [],
  );

/** Whether `parse` accepts (true) or answers 400 (false); anything else is a failure. */
function routeAccepts(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch (err) {
    if (err instanceof BadRequest) return false;
    throw err;
  }
}

describe('POST /plants', () => {
  const documented = schemaAt(
    'paths',
    '/plants',
    'post',
    'requestBody',
    'content',
    'application/json',
    'schema',
  );

  test('When the operation is registered, then its body schema is the one parseNewPlant parses with', () => {
    const [post, ...more] = operation('post');
    expect(more).toEqual([]);
    expect(
      (post?.request?.body?.content['application/json'] as { schema?: unknown } | undefined)
        ?.schema,
    ).toBe(NewPlantSchema);
  });

  // Ids beyond 2^53 cannot reach ajv exactly (JSON.parse rounds them); api-types.test holds the int64 bounds.
  test.each([
    ['a minimal plant', '{"id":1,"name":"Fern"}', true],
    ['every field', '{"id":-9007199254740991,"name":"Fern","tag":"green"}', true],
    ['an unknown field (ignored)', '{"id":0,"name":"Fern","colour":"red"}', true],
    ['name at 255 characters', `{"id":1,"name":"${'x'.repeat(255)}"}`, true],
    ['name at 255 emoji (code points)', `{"id":1,"name":"${'🌵'.repeat(255)}"}`, true],
    ['tag at 64 characters', `{"id":1,"name":"a","tag":"${'x'.repeat(64)}"}`, true],
    ['inner and outer spaces', '{"id":1,"name":" Aloe vera ","tag":"ø"}', true],
    ['name over 255 characters', `{"id":1,"name":"${'x'.repeat(256)}"}`, false],
    ['name over 255 emoji', `{"id":1,"name":"${'🌵'.repeat(256)}"}`, false],
    ['tag over 64 characters', `{"id":1,"name":"a","tag":"${'x'.repeat(65)}"}`, false],
    ['empty name', '{"id":1,"name":""}', false],
    ['empty tag', '{"id":1,"name":"a","tag":""}', false],
    ['blank name', '{"id":1,"name":" \\t "}', false],
    ['name of no-break spaces', '{"id":1,"name":"\\u00a0\\u3000"}', false],
    ['C0 control character', '{"id":1,"name":"a\\u0007b"}', false],
    ['newline', '{"id":1,"name":"a\\nb"}', false],
    ['DEL', '{"id":1,"name":"a\\u007f"}', false],
    ['C1 control character', '{"id":1,"tag":"a\\u0085","name":"b"}', false],
    ['missing id', '{"name":"a"}', false],
    ['missing name', '{"id":1}', false],
    ['string id', '{"id":"12","name":"a"}', false],
    ['fractional id', '{"id":1.5,"name":"a"}', false],
    ['null tag', '{"id":1,"name":"a","tag":null}', false],
    ['numeric name', '{"id":1,"name":5}', false],
    ['an array', '[]', false],
    ['null', 'null', false],
  ])('When the body has %s, then the route and the document agree', (_case, text, accepted) => {
    const route = routeAccepts(() => parseNewPlant(parseJsonLossless(text)));
    expect({ route, document: documented(JSON.parse(text)) }).toEqual({
      route: accepted,
      document: accepted,
    });
  });
});

describe('GET /plants', () => {
  const [limit, cursor] = (doc.paths?.['/plants']?.get?.parameters ?? []) as {
    name: string;
    required: boolean;
    schema: { default?: unknown };
  }[];
  const limitSchema = schemaAt('paths', '/plants', 'get', 'parameters', '0', 'schema');

  test('When the operation is registered, then its query schema is ListPlantsQuery', () => {
    const [get, ...more] = operation('get');
    expect(more).toEqual([]);
    expect(get?.request?.query).toBe(ListPlantsQuery);
  });

  test('When limit is absent, then the route takes the documented default', () => {
    expect({ name: limit?.name, required: limit?.required }).toEqual({
      name: 'limit',
      required: false,
    });
    expect(parseLimit({})).toBe(limit?.schema.default);
  });

  test.each([
    [1, true],
    [2, true],
    [999, true],
    [1000, true],
    [0, false],
    [-1, false],
    [1001, false],
    [1.5, false],
    [2 ** 31, false],
  ])('When limit is %s, then the route and the document agree', (value, accepted) => {
    const route = routeAccepts(() => parseLimit({ limit: String(value) }));
    expect({ route, document: limitSchema(value) }).toEqual({
      route: accepted,
      document: accepted,
    });
  });

  test('When cursor is absent or one the route issued, then both accept it; it is an opaque string', () => {
    expect({ name: cursor?.name, required: cursor?.required, schema: cursor?.schema }).toEqual({
      name: 'cursor',
      required: false,
      schema: { type: 'string' },
    });
    expect(parseCursor({})).toBeUndefined();
    const issued = encodeCursor('9223372036854775807');
    expect(parseCursor({ cursor: issued })).toBe('9223372036854775807');
    expect(schemaAt('paths', '/plants', 'get', 'parameters', '1', 'schema')(issued)).toBe(true);
  });
});
