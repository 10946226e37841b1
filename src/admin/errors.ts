// Every refusal of the admin API, defined once: code -> status (as http/errors.ts does for the
// public path). The message says what was wrong with this call, so it is given where it is raised;
// the body is `{message}` and any extra fields (admin/server.ts renders it). `what` says when the
// code is given, for the OpenAPI document (openapi.ts).

export const ADMIN_ERRORS = {
  TOKEN_REQUIRED: { status: 401, what: 'no Authorization header' },
  INVALID_TOKEN: { status: 401, what: 'an Authorization header other than an admin token' },
  READ_ONLY_TOKEN: { status: 403, what: 'a write (POST, PATCH, DELETE) with a token of scope `read` (`admin.tokens`)' },
  AUTH_LOCKED: { status: 429, what: 'an address that kept failing to authenticate, for a while (Retry-After)' },
  NO_SUCH_ROUTE: { status: 404, what: 'no such admin route' },
  NO_SUCH_KEY: { status: 404, what: 'no key with this id' },
  NO_SUCH_PLAN: { status: 404, what: 'no plan with this name' },
  NO_SUCH_ACCOUNT: { status: 404, what: "no account with this id (in the path, or as a key's `account`)" },
  CONFIGURED_PLAN: { status: 409, what: 'a configured plan changed through the API: the file is its source' },
  PLAN_EXISTS: { status: 409, what: 'a plan of this name exists (in the configuration file or made at run time)' },
  PLAN_IN_USE: { status: 409, what: 'a plan deleted while keys or accounts are on it (`keys`, `accounts` list them)' },
  ACCOUNT_IN_USE: { status: 409, what: 'an account deleted while keys belong to it (`keys` lists them)' },
  NO_SUCH_WEBHOOK: { status: 404, what: 'no webhook with this id' },
  NO_SUCH_DELIVERY: { status: 404, what: 'no webhook delivery with this id' },
  CONFIGURED_WEBHOOK: { status: 409, what: 'a configured webhook changed through the API: the file is its source' },
  CONFIGURED_KEY: { status: 409, what: 'a configured key changed through the API: the file is its source' },
  NAME_TAKEN: { status: 409, what: 'the name is used by another key' },
  CREDITS_BELOW_ZERO: {
    status: 409,
    what: 'a correction that would take bought credits below zero (`available` says how many it may take)',
  },
  INVALID_BODY: { status: 422, what: 'the body does not have the documented shape (`errors` lists every problem)' },
  UNKNOWN_PLAN: { status: 422, what: 'no such plan in the configuration (`plans` lists them)' },
  UNKNOWN_CHAIN: { status: 422, what: 'no such chain in the configuration' },
  UNKNOWN_ROUTE: { status: 422, what: 'a route name in `limits.costs`, or a pattern in `routes`, that names no route' },
  EXPIRY_NOT_IN_FUTURE: { status: 422, what: '`expiresAt` is not in the future' },
  INVALID_INSTANT: { status: 422, what: 'a date or date-time that is not ISO 8601 or does not exist' },
  INVALID_QUERY: { status: 400, what: 'a query parameter that is unknown or malformed (`errors` lists every problem)' },
  INVALID_RANGE: { status: 400, what: '`from` is after `to`' },
  BAD_REQUEST: {
    status: 400,
    what: "fastify's own refusal, with its status: a body that is not JSON (400), too large (413), of another type (415)",
  },
  STORE_UNAVAILABLE: {
    status: 503,
    what: 'the records store (or Redis) is away or cannot write now: nothing was changed; try again (Retry-After)',
  },
  INTERNAL: { status: 500, what: "the gateway's own bug" },
} as const satisfies Record<string, { status: number; what: string }>;

export type AdminErrorCode = keyof typeof ADMIN_ERRORS;

/** An answer of the admin API other than 2xx: its code, `{message}` and any extra fields. */
export class AdminError extends Error {
  readonly status: number;

  constructor(
    readonly code: AdminErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    /** Only for BAD_REQUEST: the status fastify gave. */
    status?: number,
  ) {
    super(message);
    this.name = 'AdminError';
    this.status = status ?? ADMIN_ERRORS[code].status;
  }
}
