// Every refusal of the admin API, defined once: code -> status (as http/errors.ts does for the
// public path). The message says what was wrong with this call, so it is given where it is raised;
// the body is `{message}` and any extra fields (admin/server.ts renders it).

export const ADMIN_ERRORS = {
  /** No Authorization header. */
  TOKEN_REQUIRED: { status: 401 },
  INVALID_TOKEN: { status: 401 },
  /** An address that kept failing to authenticate, for a while. */
  AUTH_LOCKED: { status: 429 },
  NO_SUCH_ROUTE: { status: 404 },
  NO_SUCH_KEY: { status: 404 },
  /** A configured key changed through the API: the file is its source. */
  CONFIGURED_KEY: { status: 409 },
  NAME_TAKEN: { status: 409 },
  INVALID_BODY: { status: 422 },
  UNKNOWN_PLAN: { status: 422 },
  UNKNOWN_CHAIN: { status: 422 },
  EXPIRY_NOT_IN_FUTURE: { status: 422 },
  INVALID_INSTANT: { status: 422 },
  INVALID_QUERY: { status: 400 },
  INVALID_RANGE: { status: 400 },
  /** fastify's own 4xx (a body that is not JSON, too large, of another type): its status. */
  BAD_REQUEST: { status: 400 },
  /** The records store (or Redis) is away or cannot write now: nothing was changed; try again. */
  STORE_UNAVAILABLE: { status: 503 },
  INTERNAL: { status: 500 },
} as const satisfies Record<string, { status: number }>;

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
