// Parameter values for walking the route table in tests: one the document accepts, and one it
// refuses, read from each parameter's schema (the generated table), not from the gateway's checks.
import type { ParamSchema } from '../../src/routes/spec-types.js';

export const SAMPLE_ADDRESS = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';
export const SAMPLE_HASH = `0x${'ab'.repeat(32)}`;

const BY_PATTERN: Record<string, string> = {
  '^0x([A-Fa-f0-9]{40})$': SAMPLE_ADDRESS,
  '^0x[a-fA-F0-9]{40}$': SAMPLE_ADDRESS,
  '^0x([A-Fa-f0-9]{64})$': SAMPLE_HASH,
  '^0x[a-fA-F0-9]{64}$': SAMPLE_HASH,
  '^0x([A-Fa-f0-9]*)$': '0xabcdef',
  '^-?([1-9][0-9]*|0)$': '7',
  '^([1-9][0-9]*|0)$': '7',
  '^([1-9][0-9]*|0)(\\.[0-9]+)?$': '1.5',
  '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$': '0a1b2c3d-0000-4000-8000-00000000abcd',
  '^null$': 'null',
};

/** A value the schema accepts. */
export function validSample(schema: ParamSchema): string {
  if (schema.enum && schema.enum.length > 0) return schema.enum[0]!;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    // A branch that means something rather than "null" or "": what a client would send.
    const meaningful = branches.find((b) => b.pattern !== '^null$' && b.maxLength !== 0) ?? branches[0]!;
    return validSample(meaningful);
  }
  if (schema.pattern !== undefined) {
    const known = BY_PATTERN[schema.pattern];
    if (known !== undefined) return known;
    if (schema.pattern.includes('ERC-20')) return 'ERC-20';
    if (schema.pattern.includes('active')) return 'active';
    if (schema.pattern.startsWith('^\\d{4}-')) return '2024-05-01'; // from_period, to_period
    throw new Error(`no sample for the pattern ${schema.pattern}`);
  }
  if (schema.format === 'date-time') return '2024-05-01T12:00:00Z';
  if (schema.type === 'integer') return schema.minimum !== undefined && BigInt(schema.minimum) > 7n ? schema.minimum : '7';
  if (schema.type === 'boolean') return 'true';
  if (schema.type === 'array') return schema.items ? [validSample(schema.items), validSample(schema.items)].join(',') : '1,2';
  return 'abc';
}

/** A value the schema refuses, or undefined for a schema that takes any text. */
export function invalidSample(schema: ParamSchema): string | undefined {
  if (schema.enum) return 'no-such-value';
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return branches.every((b) => invalidSample(b) !== undefined) ? 'zz-not-any' : undefined;
  if (schema.pattern !== undefined || schema.format !== undefined) return 'zz';
  if (schema.type === 'integer' || schema.type === 'boolean' || schema.type === 'array') return 'zz';
  return undefined;
}
