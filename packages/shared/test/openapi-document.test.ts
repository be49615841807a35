import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { boundedText, ErrorSchema, TEXT_PATTERN } from '../src/api/index.js';
import {
  BEARER_JWT,
  errorResponse,
  errorResponses,
  generateApiDocument,
  jsonPageResponse,
  jsonResponse,
  OpenAPIRegistry,
  responseSchema,
} from '../src/http/index.js';

describe('TEXT_PATTERN', () => {
  const text = boundedText('name', 1000);
  const samples = [
    'Fern',
    ' Aloe vera ',
    'ø',
    '🌵',
    'a\u00a0b',
    '',
    ' ',
    '\t',
    '\u00a0\u2003\u3000\ufeff',
    '\u2028',
    'a\u0000',
    'a\u001f',
    'a\u007f',
    'a\u0080',
    'a\u009f',
    '\u00a0a',
    'a\u200b',
  ];

  it.each(samples.map((s) => [JSON.stringify(s), s]))(
    'When the text is %s, then the pattern (with and without the u flag) and boundedText agree',
    (_label, s) => {
      const valid = text.safeParse(s).success;
      expect({
        unicode: new RegExp(TEXT_PATTERN, 'u').test(s),
        plain: new RegExp(TEXT_PATTERN).test(s),
      }).toEqual({ unicode: valid, plain: valid });
    },
  );

  it('When the samples are checked, then both verdicts occur (the comparison can fail)', () => {
    expect(new Set(samples.map((s) => text.safeParse(s).success))).toEqual(new Set([true, false]));
  });
});

describe('jsonPageResponse', () => {
  it('When a page of a list is described, then it is a JSON array of the item with the Link header of the next page', () => {
    const item = z.object({ id: z.string() });
    const page = jsonPageResponse('A page', item, 'the next page');
    const { schema } = page.content!['application/json'] as { schema: z.ZodArray<typeof item> };
    expect(schema.element).toBe(item);
    expect({ ...page, content: undefined }).toEqual({
      description: 'A page',
      headers: { Link: { description: 'the next page', schema: { type: 'string' } } },
      content: undefined,
    });
  });
});

describe('errorResponses', () => {
  it('When given descriptions and whole responses, then each status answers in the Error shape', () => {
    const challenge = {
      'WWW-Authenticate': { description: 'challenge', schema: { type: 'string' as const } },
    };
    expect(errorResponses({ 400: 'Invalid', 401: errorResponse('Who?', challenge) })).toEqual({
      400: { description: 'Invalid', content: { 'application/json': { schema: ErrorSchema } } },
      401: {
        description: 'Who?',
        headers: challenge,
        content: { 'application/json': { schema: ErrorSchema } },
      },
    });
  });
});

describe('generateApiDocument', () => {
  const Thing = z.object({ name: z.string() }).meta({ id: 'Thing' });
  const operations = () => {
    const registry = new OpenAPIRegistry();
    registry.registerPath({
      method: 'get',
      path: '/things',
      responses: {
        200: jsonResponse('Things', z.array(Thing)),
        ...errorResponses({ 401: 'Who?' }),
      },
    });
    return registry;
  };
  const config = {
    title: 'Things',
    version: '1.0.0',
    description: 'All of them',
    serverUrl: 'http://things.test',
    securitySchemes: {
      bearer: BEARER_JWT,
      session: { type: 'apiKey' as const, in: 'cookie', name: 's' },
    },
  };

  it('When generated, then each security scheme is an alternative, schemas are referenced by their meta id, and no empty section is left', () => {
    const registry = operations();
    const doc = generateApiDocument(registry, config);
    expect(doc).toEqual({
      openapi: '3.1.0',
      info: { title: 'Things', version: '1.0.0', description: 'All of them' },
      servers: [{ url: 'http://things.test' }],
      security: [{ bearer: [] }, { session: [] }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          session: { type: 'apiKey', in: 'cookie', name: 's' },
        },
        schemas: {
          Thing: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          Error: expect.objectContaining({
            required: ['error', 'message'],
            additionalProperties: false,
          }),
        },
      },
      paths: {
        '/things': {
          get: {
            responses: {
              200: {
                description: 'Things',
                content: {
                  'application/json': {
                    schema: { type: 'array', items: { $ref: '#/components/schemas/Thing' } },
                  },
                },
              },
              401: {
                description: 'Who?',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
              },
            },
          },
        },
      },
    });
    expect(generateApiDocument(registry, config)).toEqual(doc);
  });
});

describe('responseSchema', () => {
  it('When the schema and the type agree, then it returns the schema itself', () => {
    const schema = z.object({ a: z.string(), b: z.number().nullable() });
    expect(responseSchema<{ a: string; b: number | null }>()(schema)).toBe(schema);
  });

  // The verdict is the type-check of `pnpm lint` (tsconfig.test.json): an expected error that does not occur fails it.
  it('When they disagree either way, then it does not compile', () => {
    // @ts-expect-error the schema lacks the type's field b
    responseSchema<{ a: string; b: string }>()(z.object({ a: z.string() }));
    // @ts-expect-error the schema promises a field c the type lacks
    responseSchema<{ a: string }>()(z.object({ a: z.string(), c: z.string() }));
    // @ts-expect-error the schema allows null where the type does not
    responseSchema<{ a: string }>()(z.object({ a: z.string().nullable() }));
    // @ts-expect-error the type allows null where the schema does not
    responseSchema<{ a: string | null }>()(z.object({ a: z.string() }));
  });
});
