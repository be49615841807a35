import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../src/entry-points/api/openapi.js';

const DOC_ID = 'https://account-admin.test/openapi.json';
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ ...openApiDocument('http://portal.test'), $id: DOC_ID });

/** The ajv errors of `value` against a schema of the served OpenAPI document, or [] when it conforms. */
export function schemaErrors(schemaName: string, value: unknown): unknown[] {
  const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/${schemaName}`);
  if (!validate) throw new Error(`no schema ${schemaName} in the OpenAPI document`);
  return validate(value) ? [] : (validate.errors ?? []);
}

/** Validates every item of an array response. */
export function arraySchemaErrors(schemaName: string, values: unknown[]): unknown[] {
  return values.flatMap((value) => schemaErrors(schemaName, value));
}
