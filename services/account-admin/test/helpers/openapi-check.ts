/**
 * Checks values against the served OpenAPI document (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1), the very object `GET /api/v1/openapi.json` serializes.
 */
import type { OpenApiDocument } from '@plant/shared/http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../src/http/openapi.js';

const DOC_ID = 'https://account-admin.test/openapi.json';
export const document: OpenApiDocument = openApiDocument('http://portal.test');
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ ...document, $id: DOC_ID });

/** The document's JSON Schema at `path` (keys, unescaped), e.g. an operation's request body. */
export function documentSchema(...path: string[]): ValidateFunction {
  const pointer = path.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  // compile throws when nothing is at the pointer.
  return ajv.getSchema(`${DOC_ID}#/${pointer}`) ?? ajv.compile({ $ref: `${DOC_ID}#/${pointer}` });
}

/** The ajv errors of `value` against a schema of the served OpenAPI document, or [] when it conforms. */
export function schemaErrors(schemaName: string, value: unknown): unknown[] {
  const validate = documentSchema('components', 'schemas', schemaName);
  return validate(value) ? [] : (validate.errors ?? []);
}

/** Validates every item of an array response. */
export function arraySchemaErrors(schemaName: string, values: unknown[]): unknown[] {
  return values.flatMap((value) => schemaErrors(schemaName, value));
}
