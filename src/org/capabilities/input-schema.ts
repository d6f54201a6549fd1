/**
 * Capability input against its JSON Schema (DESIGN 4.4 step 1: invalid input is an error, not a verdict),
 * with ajv (DESIGN 7). Compiled validators are kept per schema text: the organization file changes rarely
 * and every execution validates.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { orgErrors } from '../errors.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

/** Why a schema cannot be used, or undefined when ajv compiles it (checked when the file is read). */
export function inputSchemaProblem(schema: Record<string, unknown>): string | undefined {
  try {
    validatorFor(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Throws `invalid_request` naming every failing field (`input.text: must be string`). */
export function checkCapabilityInput(schema: Record<string, unknown> | null, input: unknown): void {
  if (!schema) return;
  const validate = validatorFor(schema);
  if (validate(input)) return;
  const fields = (validate.errors ?? []).map(describeError);
  throw orgErrors.invalidRequest(`input does not match the capability's input schema: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, {
    fields,
  });
}

function describeError(error: ErrorObject): { field: string; message: string } {
  const missing = error.keyword === 'required' ? `/${String(error.params.missingProperty)}` : '';
  const extra = error.keyword === 'additionalProperties' ? `/${String(error.params.additionalProperty)}` : '';
  const pointer = `${error.instancePath}${missing}${extra}`;
  const field = `input${pointer.replace(/\//g, '.')}`;
  const message = error.keyword === 'additionalProperties' ? 'is not allowed' : error.keyword === 'required' ? 'is required' : (error.message ?? 'is invalid');
  return { field, message };
}
