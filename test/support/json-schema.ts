// OpenAPI 3.0 schemas as JSON Schema for ajv: `nullable: true` becomes anyOf [schema, null]. The
// spec puts it next to allOf/oneOf without a `type` and next to enums that do not list null, where
// `type: [t, "null"]` would not work.
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
