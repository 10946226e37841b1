// What the legacy RPC document (spec/blockscout-rpc-api-1.0.0.yaml) does not say about its
// actions and Blockscout's controllers do: the texts an instance answers a bad parameter with
// (HTTP 200, status "0"), and the few places where the controller accepts more than the
// document allows. Refusing a request an instance would serve breaks clients, so there the
// controller wins. Sources, in blockscout/blockscout (GitHub), directory
// apps/block_scout_web/lib/block_scout_web/controllers/api/rpc/:
//   address_controller.ex (module account), block_controller.ex, contract_controller.ex,
//   logs_controller.ex, stats_controller.ex, token_controller.ex, transaction_controller.ex.
// Where a controller has no text of its own (it ignores the bad value), src/routes/param-check.ts
// words one: `Query parameter 'NAME' is required` (block_controller.ex's form) or
// `Invalid NAME: DETAIL`.
import type { ParamSchema } from './spec-types.js';

export interface LegacyParamRule {
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

// address_controller.ex do_tokentx/3: either address or contractaddress, which the document's
// `required: true` on address does not allow for.
const TOKEN_TRANSFERS: LegacyActionRules = {
  params: {
    address: { required: false, invalid: INVALID_ADDRESS_FORMAT },
    contractaddress: { invalid: 'Invalid contract address format' },
  },
  oneOfRequired: { names: ['address', 'contractaddress'], message: 'Query parameter address or contractaddress is required' },
};

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
  'account.balance': { params: { address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_HASH } } },
  'account.balancemulti': { params: { address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_HASH } } },
  'account.txlist': { params: { address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_FORMAT } } },
  'account.pendingtxlist': { params: { address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_FORMAT } } },
  'account.getminedblocks': { params: { address: { missing: ADDRESS_REQUIRED, invalid: INVALID_ADDRESS_FORMAT } } },
  'account.txlistinternal': { params: { address: { invalid: INVALID_ADDRESS_FORMAT }, txhash: { invalid: TXHASH.invalid } } },
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
  'contract.getcontractcreation': { params: { contractaddresses: { missing: 'Query parameter contractaddresses is required' } } },
  // logs_controller.ex: fromBlock and toBlock, and an address or a topic.
  'logs.getLogs': {
    missingTogether: 'Required query parameters missing: ',
    oneOfRequired: { names: ['address', 'topic0', 'topic1', 'topic2', 'topic3'], message: 'address and/or topic{x}' },
    params: {
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
