// Parameter schemas per route, in zod, with the detail texts Blockscout's OpenApiSpex casts
// produce (so a client sees the same 422 from the gateway as from an instance).
import { z } from 'zod';
import type { ValidationIssue } from '../http/errors.js';
import { canonicalInteger, isDateTime } from './param-check.js';

export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const TX_HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const INTEGER_STRING_RE = /^-?(?:[1-9][0-9]*|0)$/;
// ISO 8601 date-time as Blockscout writes `inserted_at` (RFC 3339 profile, fraction optional).
const ISO_DATETIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

export const ADDRESS_DETAIL = 'Invalid format. Expected ~r/^0x([A-Fa-f0-9]{40})$/';
const ENUM_DETAIL = 'Invalid value for enum';

const enumOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: ENUM_DETAIL });

/** An integer query parameter, normalised so equal requests share a cache entry. */
const integer = (minimum?: number) =>
  z
    .string()
    .regex(/^-?\d{1,40}$/, { error: 'Invalid integer. Got: string' })
    .transform(canonicalInteger)
    .refine((n) => minimum === undefined || BigInt(n) >= BigInt(minimum), {
      error: (iss) => `${String(iss.input)} is smaller than inclusive minimum ${minimum}`,
    });

const pattern = (re: RegExp, shown: string) => z.string().regex(re, { error: `Invalid format. Expected ~r/${shown}/` });

export const transactionsQuery = z
  .strictObject({
    filter: enumOf(['to', 'from']).optional(),
    sort: enumOf(['block_number', 'value', 'fee']).optional(),
    order: enumOf(['asc', 'desc']).optional(),
    items_count: integer(1).optional(),
    block_number: integer().optional(),
    index: integer().optional(),
    // RFC 3339's shape, and a real instant: no 2024-02-30, no hour 25, no 0000-00-00.
    inserted_at: z
      .string()
      .refine((s) => ISO_DATETIME_RE.test(s) && isDateTime(s), { error: 'Invalid format. Expected :"date-time"' })
      .optional(),
    // Lower-cased as every forwarded hash is (docs/clients.md, What is forwarded): one cache entry per hash.
    hash: pattern(TX_HASH_RE, '^0x([A-Fa-f0-9]{64})$')
      .transform((h) => h.toLowerCase())
      .optional(),
    value: pattern(INTEGER_STRING_RE, '^-?([1-9][0-9]*|0)$').optional(),
    fee: pattern(INTEGER_STRING_RE, '^-?([1-9][0-9]*|0)$').optional(),
  })
  .superRefine((q, ctx) => {
    // Blockscout silently ignores sort without order; the contract makes the pair explicit.
    if (q.sort !== undefined && q.order === undefined) {
      ctx.addIssue({ code: 'custom', path: ['order'], message: 'Missing field: order (sort and order go together)' });
    }
    if (q.order !== undefined && q.sort === undefined) {
      ctx.addIssue({ code: 'custom', path: ['sort'], message: 'Missing field: sort (sort and order go together)' });
    }
  });

/** token-balances takes no query parameters. */
export const tokenBalancesQuery = z.strictObject({});

/** Turns zod issues into JsonErrorResponse entries: one per bad parameter, pointer `/NAME`. */
export function toIssues(error: z.ZodError): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const issue of error.issues) {
    const names = issue.code === 'unrecognized_keys' ? issue.keys : [String(issue.path[0] ?? '')];
    for (const name of names) {
      if (seen.has(name)) continue;
      seen.add(name);
      out.push({ name, detail: issue.code === 'unrecognized_keys' ? `Unexpected field: ${name}` : issue.message });
    }
  }
  return out;
}

// Legacy `module=token` parameters. Texts are Blockscout's where it has one.
export const LEGACY_CONTRACT_REQUIRED = 'Query parameter contract address is required';
export const LEGACY_CONTRACT_INVALID = 'Invalid contract address hash';

const nonNegative = (name: string) =>
  z
    .string()
    .regex(/^\d{1,40}$/, { error: `Invalid ${name}: expected a non-negative integer` })
    .transform(canonicalInteger);

const contractAddress = z
  .string({ error: LEGACY_CONTRACT_REQUIRED })
  .regex(ADDRESS_RE, { error: LEGACY_CONTRACT_INVALID })
  .transform((s) => s.toLowerCase());

const paging = {
  page: nonNegative('page').optional(),
  offset: nonNegative('offset').optional(),
};

const pagingTogether = (q: { page?: string | undefined; offset?: string | undefined }, ctx: z.RefinementCtx) => {
  if ((q.page === undefined) !== (q.offset === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['page'], message: "Query parameters 'page' and 'offset' go together" });
  }
};

// Non-strict: other legacy parameters are dropped, not rejected (Etherscan-style clients add their own).
export const legacyQuery = {
  getToken: z.object({ contractaddress: contractAddress }),
  getTokenHolders: z.object({ contractaddress: contractAddress, ...paging }).superRefine(pagingTogether),
  bridgedTokenList: z.object({ chainid: nonNegative('chainid').optional(), ...paging }).superRefine(pagingTogether),
} as const;

export type LegacyAction = keyof typeof legacyQuery;
