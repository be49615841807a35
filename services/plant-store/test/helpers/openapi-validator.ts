/**
 * Validates response bodies against the service's own `/openapi.json` (JSON Schema 2020-12,
 * the dialect of OpenAPI 3.1), so every response a component test sees is one the document
 * allows. The document is generated from the zod schemas (src/entry-points/api/openapi.ts);
 * test/openapi-contract.test.ts holds the request side.
 */
import { expect } from '@jest/globals';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
  >;
};

export interface ResponseLike {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

const DOC_ID = 'openapi.json';

/** Looks up the JSON Schema at `path` (keys, unescaped) inside `doc`, compiled with `doc`'s formats. */
export function documentSchemas(doc: object): (...path: string[]) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat('int64', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 63) && n < 2 ** 63,
  });
  ajv.addSchema(doc, DOC_ID);
  return (...path) => {
    const pointer = path.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    return ajv.getSchema(`${DOC_ID}#/${pointer}`) ?? ajv.compile({ $ref: `${DOC_ID}#/${pointer}` });
  };
}

export async function openApiValidator(baseUrl: string) {
  const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as Doc;
  const schemaAt = documentSchemas(doc);
  const errorValidator = schemaAt('components', 'schemas', 'Error');

  /**
   * Asserts the body matches the documented schema of (method, path, status). Routes the
   * document does not describe (404, 405) must still answer in the `Error` shape.
   */
  return function expectDocumented(method: string, path: string, res: ResponseLike): void {
    const operation = doc.paths[path]?.[method.toLowerCase()];
    if (operation === undefined) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect({ valid: errorValidator(res.body), errors: errorValidator.errors ?? null }).toEqual({
        valid: true,
        errors: null,
      });
      return;
    }
    const response = operation.responses[String(res.status)];
    if (response === undefined)
      throw new Error(
        `${method} ${path} answered ${res.status}, which the OpenAPI document does not list`,
      );
    if (response.content?.['application/json']?.schema === undefined) return;
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    const validate = schemaAt(
      'paths',
      path,
      method.toLowerCase(),
      'responses',
      String(res.status),
      'content',
      'application/json',
      'schema',
    );
    expect({ valid: validate(res.body), errors: validate.errors ?? null }).toEqual({
      valid: true,
      errors: null,
    });
  };
}
