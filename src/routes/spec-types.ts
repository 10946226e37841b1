// The shapes of the data scripts/generate-routes.ts extracts from the vendored API documents
// (spec/pro-api-0.5.0.json, spec/blockscout-rpc-api-1.0.0.yaml) into src/routes/generated/.
// Only what a parameter validator needs is kept; every `$ref` is inlined.

/**
 * A parameter's schema, fully resolved. The generator refuses a document that uses any other
 * validation keyword, so a newer document cannot slip in a rule that would be silently ignored.
 */
export interface ParamSchema {
  readonly type?: 'string' | 'integer' | 'boolean' | 'array' | 'object';
  /** Printed by OpenApiSpex when an anyOf branch fails: `Schema(title: "NullString", type: :string)`. */
  readonly title?: string;
  readonly enum?: readonly string[];
  /** The pattern as the document writes it (PCRE in Blockscout; the ones used are also valid JavaScript). */
  readonly pattern?: string;
  /** int64: the integer of a Rust service (an integer, or text of one for `type: string`). */
  readonly format?: 'date-time' | 'uuid' | 'int64';
  /**
   * Inclusive bounds, as decimal text: exact for any size (the PRO API document prints
   * int64's maximum as a rounded double, see the generator), compared with BigInt.
   */
  readonly minimum?: string;
  readonly maximum?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly maxItems?: number;
  readonly nullable?: boolean;
  readonly anyOf?: readonly ParamSchema[];
  readonly oneOf?: readonly ParamSchema[];
  readonly items?: ParamSchema;
  /** Informative only: the gateway never fills in defaults, the instance does. */
  readonly default?: string | number | boolean;
}

export interface ParamData {
  readonly name: string;
  readonly required: boolean;
  readonly schema: ParamSchema;
}

/** One GET operation of the PRO API under `/{chain_id}/api/v2/`. */
export interface V2OperationData {
  /** The path after `/{chain_id}`, as the document spells it: `/api/v2/transactions/{transaction_hash_param}/logs`. */
  readonly template: string;
  readonly operationId: string;
  /** In template order; `chain_id` left out. */
  readonly pathParams: readonly ParamData[];
  /** In document order. */
  readonly queryParams: readonly ParamData[];
}

/** One GET action of the legacy RPC API (`/api?module=M&action=A`). */
export interface LegacyActionData {
  readonly module: string;
  readonly action: string;
  readonly operationId: string;
  /** In document order; `module` and `action` left out. */
  readonly params: readonly ParamData[];
}

/**
 * One operation of the PRO API outside `/{chain_id}/api/v2/` (GET or POST): an explorer's
 * `/api/v1/search` and `/api/legacy/...`, a chain's stats service, the shared services under
 * `/services/`.
 */
export interface ServiceOperationData {
  /** As the document spells it: `/{chain_id}/stats-service/api/v1/lines/{name}`, `/services/bens/api/v1/protocols`. */
  readonly documentPath: string;
  readonly method: 'GET' | 'POST';
  readonly operationId: string;
  /** In template order; the gateway's `chain_id` of a `/{chain_id}/...` path left out. */
  readonly pathParams: readonly ParamData[];
  /** In document order. */
  readonly queryParams: readonly ParamData[];
}
