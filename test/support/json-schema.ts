// OpenAPI 3.0 schemas as JSON Schema for ajv: `nullable: true` becomes anyOf [schema, null]. The
// spec puts it next to allOf/oneOf without a `type` and next to enums that do not list null, where
// `type: [t, "null"]` would not work.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

export function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  let nullable = false;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' && typeof value === 'boolean')
      nullable = value; // not a property named "nullable"
    else out[key] = toJsonSchema(value);
  }
  return nullable ? { anyOf: [out, { type: 'null' }] } : out;
}

/**
 * Checks bodies against the 200 schemas of a document's operations (`responses`, by a name of the
 * caller's), with the document's `schemas` for their `$ref`s: undefined for a valid body, else
 * ajv's errors. OpenAPI's `nullable` is read as toJsonSchema reads it; the document's one `uint64`
 * (v1ChainBlockNumber.block_number) is a decimal string, as protobuf's JSON mapping writes 64-bit
 * integers.
 */
export function responseChecker(
  schemas: Record<string, unknown>,
  responses: Record<string, unknown>,
): (name: string, body: unknown) => string | undefined {
  const root = `https://response-checker.test/${++checkers}.json`;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('uint64', { type: 'string', validate: /^\d+$/ });
  ajv.addSchema(toJsonSchema({ $id: root, components: { schemas }, responses }) as object);
  const compiled = new Map<string, ValidateFunction>();
  return (name, body) => {
    if (!Object.hasOwn(responses, name)) throw new Error(`no response schema named ${name}`);
    let validate = compiled.get(name);
    if (validate === undefined) {
      // RFC 6901 escapes, then the fragment's percent-encoding (RFC 3986): names may hold `/`, spaces, braces.
      const pointer = encodeURIComponent(name.replaceAll('~', '~0').replaceAll('/', '~1'));
      compiled.set(name, (validate = ajv.compile({ $ref: `${root}#/responses/${pointer}` })));
    }
    return validate(body) ? undefined : ajv.errorsText(validate.errors);
  };
}
let checkers = 0;
