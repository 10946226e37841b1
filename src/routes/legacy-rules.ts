// What the legacy RPC document (spec/blockscout-rpc-api-1.0.0.yaml) does not say about its
// actions and Blockscout's controllers do: the texts an instance answers a bad parameter with
// (HTTP 200, status "0"), and the few places where the controller accepts more than the
// document allows. Refusing a request an instance would serve breaks clients, so there the
// controller wins. Sources, in blockscout/blockscout (GitHub), directory
// apps/block_scout_web/lib/block_scout_web/controllers/api/rpc/:
//   address_controller.ex (module account), block_controller.ex, contract_controller.ex,
//   logs_controller.ex, stats_controller.ex, token_controller.ex, transaction_controller.ex.
// Where a controller ignores a value it cannot read (most optional parameters: blocks, paging,
// sort, flags), the gateway does not refuse it either: the parameter is dropped, not forwarded,
// so that the request the explorer gets (also the cache key) is the same as without it
// (`endblock=latest`, which Etherscan clients send by default, and no endblock are one request).
// Where a parameter has neither a text nor such leniency, src/routes/param-check.ts words one:
// `Query parameter 'NAME' is required` (block_controller.ex's form) or `Invalid NAME: DETAIL`.
// Controllers as of Blockscout v11.2.7 (unchanged since, to the time of writing).
import type { ParamSchema } from './spec-types.js';

/** Blockscout refuses a page of results ending past this row (address_controller.ex optional_params/1). */
export interface ResultsWindow {
  /** The page parameter multiplied with this one (the page size). */
  readonly page: string;
  readonly max: number;
  readonly message: string;
}

/** How a controller reads a parameter beyond its schema; carried into the route table (LegacyParamSpec). */
export interface LegacyParamReading {
  /** The controller ignores a value it cannot read: such a value is dropped, not refused (in a list, each such item). */
  readonly lenient?: true;
  /** Read in any letter case (String.downcase/1), forwarded in lower case. */
  readonly downcase?: true;
  /** A comma list of which the controller reads the first N items (Enum.take/2): the rest is dropped unchecked. */
  readonly take?: number;
  /** The list's items are trimmed and empty ones left out (String.split/3 with trim: true, String.trim/1), before `take`. */
  readonly trimItems?: true;
  /** Not read at all when this other parameter is given: then dropped, whatever its value. */
  readonly ignoredWith?: string;
  /** Checked before anything else of the action, as optional_params/1 is. */
  readonly resultsWindow?: ResultsWindow;
}

export interface LegacyParamRule extends LegacyParamReading {
  /** The answer when the parameter is missing (a required one). */
  readonly missing?: string;
  /** The answer when its value does not pass the schema. */
  readonly invalid?: string;
  /** Replaces the document's `required`. */
  readonly required?: boolean;
  /** Replaces the document's schema. */
  readonly schema?: ParamSchema;
  /** The name the instance reads, when it is not the documented one. */
  readonly forwardAs?: string;
}

export interface LegacyActionRules {
  readonly params?: Readonly<Record<string, LegacyParamRule>>;
  /** At least one of these parameters must be present. */
  readonly oneOfRequired?: { readonly names: readonly string[]; readonly message: string };
  /**
   * The action names every missing required parameter in one answer: this text, then the
   * names (sorted, as Elixir's MapSet lists them) joined by ", ", then `oneOfRequired.message`
   * when that rule fails too. Missing parameters are reported before any bad value.
   */
  readonly missingTogether?: string;
}

const ADDRESS_REQUIRED = "Query parameter 'address' is required";
const INVALID_ADDRESS_HASH = 'Invalid address hash';
const INVALID_ADDRESS_FORMAT = 'Invalid address format';
const CONTRACT_ADDRESS_REQUIRED = 'Query parameter contract address is required';
const TXHASH = { missing: 'Query parameter txhash is required', invalid: 'Invalid txhash format' } as const;
const BLOCKNO = { missing: "Query parameter 'blockno' is required", invalid: 'Invalid block number' } as const;

// Lenient parameters, by the helper that reads them:
// address_controller.ex put_block/3: ExplorerHelper.safe_parse_non_negative_integer/2 with
// @max_safe_block_number (2^31 - 1); anything else (`latest`, -1, 2^31) is no block bound at all.
const BLOCK_BOUND: LegacyParamRule = { lenient: true, schema: { type: 'integer', minimum: '0', maximum: '2147483647' } };
// helper.ex put_page_option/2 and put_offset_option/2, each on its own: a page from 1, an offset
// from 1 to Etherscan.page_size_max/0 (10000); else the default page or page size.
const PAGE: LegacyParamRule = { lenient: true, schema: { type: 'integer', minimum: '1' } };
const OFFSET: LegacyParamRule = { lenient: true, schema: { type: 'integer', minimum: '1', maximum: '10000' } };
// address_controller.ex optional_params/1: with both readable, page x offset past @results_window
// is refused, before the action looks at any other parameter.
const WINDOWED_OFFSET: LegacyParamRule = {
  ...OFFSET,
  resultsWindow: {
    page: 'page',
    max: 10000,
    message: 'Result window is too large, PageNo x Offset size must be less than or equal to 10000',
  },
};
// address_controller.ex put_order_by_direction/2: `asc` or `desc` exactly, else the default order.
const SORT: LegacyParamRule = { lenient: true, schema: { type: 'string', enum: ['asc', 'desc'] } };
// The paging of address_controller.ex optional_params/1 (actions that also take a sort and a block range add those).
const PAGED = { page: PAGE, offset: WINDOWED_OFFSET } as const;
const LISTED = { ...PAGED, sort: SORT, startblock: BLOCK_BOUND, endblock: BLOCK_BOUND } as const;
// address_controller.ex to_address_hashes/1: a comma list, of which the first 20 are read (and
// checked), for balance as for balancemulti.
const ADDRESS_LIST: LegacyParamRule = {
  missing: ADDRESS_REQUIRED,
  invalid: INVALID_ADDRESS_HASH,
  schema: { type: 'array', maxItems: 20, items: { type: 'string', pattern: '^0x[a-fA-F0-9]{40}$' } },
  take: 20,
};
// address_controller.ex put_timestamp/3 (used by contract_controller.ex add_filters/2): whole
// seconds that DateTime.from_unix/1 takes (years -9999 to 9999), else no bound.
const UNIX_SECONDS: LegacyParamRule = { lenient: true, schema: { type: 'integer', minimum: '-377705116800', maximum: '253402300799' } };

// address_controller.ex do_tokentx/3: either address or contractaddress, which the document's
// `required: true` on address does not allow for.
const TOKEN_TRANSFERS: LegacyActionRules = {
  params: {
    address: { required: false, invalid: INVALID_ADDRESS_FORMAT },
    contractaddress: { invalid: 'Invalid contract address format' },
    ...LISTED,
  },
  oneOfRequired: { names: ['address', 'contractaddress'], message: 'Query parameter address or contractaddress is required' },
};

const LOG_BLOCK: ParamSchema = { anyOf: [{ type: 'string', enum: ['latest'] }, { type: 'integer' }] };

/** By `module.action`, as the document spells them. */
export const LEGACY_RULES: Readonly<Record<string, LegacyActionRules>> = {
  // address_controller.ex
  'account.eth_get_balance': {
    params: {
      address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_HASH },
      // fetch_block_param/1 takes a block number too, not only the document's three tags.
      block: {
        invalid: 'Invalid block',
        schema: { anyOf: [{ type: 'string', enum: ['latest', 'earliest', 'pending'] }, { type: 'integer' }] },
      },
    },
  },
  'account.balance': { params: { address: ADDRESS_LIST } },
  'account.balancemulti': { params: { address: ADDRESS_LIST } },
  'account.txlist': {
    params: {
      address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_FORMAT },
      ...LISTED,
      // put_filter_by/2 reads `filter_by` (`from` or `to`; else no filter), not the documented
      // `filterby`, which an instance ignores; forwarded under the name it reads, as
      // bridgedTokenList's chainid is.
      filterby: { lenient: true, forwardAs: 'filter_by' },
    },
  },
  'account.pendingtxlist': { params: { address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_FORMAT }, ...PAGED } },
  // getminedblocks/2 reads its paging with Helper.put_pagination_options/2 alone: no results window.
  'account.getminedblocks': {
    params: { address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_FORMAT }, page: PAGE, offset: OFFSET },
  },
  'account.listaccounts': { params: PAGED },
  'account.txlistinternal': {
    params: {
      address: { invalid: INVALID_ADDRESS_FORMAT },
      // txlistinternal/2 takes the address path whenever an address is given; txhash is then never read.
      txhash: { invalid: TXHASH.invalid, ignoredWith: 'address' },
      ...LISTED,
      // put_boolean/4: `true` or `false` in any case, else the default (false).
      include_zero_value: { lenient: true, downcase: true, schema: { type: 'boolean' } },
    },
  },
  'account.tokentx': TOKEN_TRANSFERS,
  'account.tokennfttx': TOKEN_TRANSFERS,
  'account.token1155tx': TOKEN_TRANSFERS,
  'account.token404tx': TOKEN_TRANSFERS,
  'account.tokenbalance': {
    missingTogether: 'Required query parameters missing: ',
    params: { contractaddress: { invalid: 'Invalid contractaddress format' }, address: { invalid: INVALID_ADDRESS_FORMAT } },
  },
  // block_controller.ex
  'block.getblockreward': { params: { blockno: BLOCKNO } },
  'block.getblockcountdown': { params: { blockno: BLOCKNO } },
  'block.getblocknobytime': {
    params: {
      timestamp: { missing: "Query parameter 'timestamp' is required", invalid: 'Invalid `timestamp` param' },
      closest: { missing: "Query parameter 'closest' is required", invalid: 'Invalid `closest` param' },
    },
  },
  // contract_controller.ex
  'contract.getabi': { params: { address: { missing: 'Query parameter address is required', invalid: INVALID_ADDRESS_HASH } } },
  'contract.getsourcecode': { params: { address: { missing: 'Query parameter address is required', invalid: INVALID_ADDRESS_HASH } } },
  // getcontractcreation/2: the list trimmed, its first 10 items read, and an item that is not an
  // address (or not one the instance may show) left out of the answer rather than refused.
  'contract.getcontractcreation': {
    params: { contractaddresses: { missing: 'Query parameter contractaddresses is required', lenient: true, trimItems: true, take: 10 } },
  },
  // listcontracts/2: Helper.put_pagination_options/2, then add_filters/2 (a bad `filter` is the
  // instance's own 400, forwarded as it answers).
  'contract.listcontracts': {
    params: { page: PAGE, offset: OFFSET, verified_at_start_timestamp: UNIX_SECONDS, verified_at_end_timestamp: UNIX_SECONDS },
  },
  // logs_controller.ex: fromBlock and toBlock, and an address or a topic.
  'logs.getLogs': {
    missingTogether: 'Required query parameters missing: ',
    oneOfRequired: { names: ['address', 'topic0', 'topic1', 'topic2', 'topic3'], message: 'address and/or topic{x}' },
    params: {
      // to_block_number/2: `latest` or an integer (Integer.parse/1, whole), else refused.
      fromBlock: { invalid: 'Invalid fromBlock format', schema: LOG_BLOCK },
      toBlock: { invalid: 'Invalid toBlock format', schema: LOG_BLOCK },
      address: { invalid: INVALID_ADDRESS_FORMAT },
      topic0_1_opr: { invalid: 'Invalid topic0_1_opr format' },
      topic0_2_opr: { invalid: 'Invalid topic0_2_opr format' },
      topic0_3_opr: { invalid: 'Invalid topic0_3_opr format' },
      topic1_2_opr: { invalid: 'Invalid topic1_2_opr format' },
      topic1_3_opr: { invalid: 'Invalid topic1_3_opr format' },
      topic2_3_opr: { invalid: 'Invalid topic2_3_opr format' },
    },
  },
  // stats_controller.ex
  'stats.tokensupply': { params: { contractaddress: { missing: CONTRACT_ADDRESS_REQUIRED, invalid: 'Invalid contract address format' } } },
  // token_controller.ex
  'token.getToken': { params: { contractaddress: { missing: CONTRACT_ADDRESS_REQUIRED, invalid: 'Invalid contract address hash' } } },
  'token.getTokenHolders': {
    params: { contractaddress: { missing: CONTRACT_ADDRESS_REQUIRED, invalid: 'Invalid contract address hash' } },
  },
  // bridgedtokenlist/2 reads `chain_ids` (a filter, optional), not the documented required
  // `chainid`; the gateway has forwarded `chainid` under that name since it served the action.
  'token.bridgedTokenList': { params: { chainid: { required: false, forwardAs: 'chain_ids' } } },
  // transaction_controller.ex
  'transaction.gettxinfo': { params: { txhash: TXHASH } },
  'transaction.gettxreceiptstatus': { params: { txhash: TXHASH } },
  'transaction.getstatus': { params: { txhash: TXHASH } },
};
