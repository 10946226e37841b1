// Generated: do not edit. `npm run generate:routes` (scripts/generate-routes.ts) writes it from
// spec/pro-api-0.5.0.json: the 153 GET operations under /{chain_id}/api/v2/.
// test/unit/route-table.test.ts fails while it differs from the generator's output.
import type { V2OperationData } from '../spec-types.js';

export const V2_OPERATIONS: readonly V2OperationData[] = [
  {
    template: '/api/v2/addresses',
    operationId: 'BlockScoutWeb.API.V2.AddressController.addresses_list',
    pathParams: [],
    queryParams: [
      { name: 'sort', required: false, schema: { type: 'string', enum: ['balance', 'transactions_count'] } },
      { name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      {
        name: 'fetched_coin_balance',
        required: false,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
      { name: 'hash', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'transactions_count',
        required: false,
        schema: {
          anyOf: [
            { type: 'integer' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.AddressController.address',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/beacon/deposits',
    operationId: 'BlockScoutWeb.API.V2.AddressController.beacon_deposits',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer', minimum: '0', maximum: '9223372036854775807' } },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/blocks-validated',
    operationId: 'BlockScoutWeb.API.V2.AddressController.blocks_validated',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/celo/election-rewards',
    operationId: 'BlockScoutWeb.API.V2.AddressController.celo_election_rewards',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'epoch_number', required: false, schema: { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' } },
      {
        name: 'amount',
        required: false,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
      {
        name: 'associated_account_address_hash',
        required: false,
        schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' },
      },
      {
        name: 'type',
        required: false,
        schema: {
          type: 'string',
          title: 'CeloElectionRewardType',
          enum: ['voter', 'validator', 'group', 'delegated_payment', 'delegated-payment'],
        },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/celo/election-rewards/csv',
    operationId: 'BlockScoutWeb.API.V2.CsvExportController.celo_election_rewards_csv',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'from_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'to_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['address'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['to', 'from'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/coin-balance-history',
    operationId: 'BlockScoutWeb.API.V2.AddressController.coin_balance_history',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/coin-balance-history-by-day',
    operationId: 'BlockScoutWeb.API.V2.AddressController.coin_balance_history_by_day',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/counters',
    operationId: 'BlockScoutWeb.API.V2.AddressController.counters',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/internal-transactions',
    operationId: 'BlockScoutWeb.API.V2.AddressController.internal_transactions',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'filter', required: false, schema: { type: 'string', enum: ['to', 'from'] } },
      { name: 'include_zero_value', required: false, schema: { type: 'boolean', default: true } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'transaction_index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/internal-transactions/csv',
    operationId: 'BlockScoutWeb.API.V2.CsvExportController.internal_transactions_csv',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'from_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'to_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['address'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['to', 'from'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/logs',
    operationId: 'BlockScoutWeb.API.V2.AddressController.logs',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'topic', required: false, schema: { type: 'string', title: 'HexData', pattern: '^0x([A-Fa-f0-9]*)$' } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/logs/csv',
    operationId: 'BlockScoutWeb.API.V2.CsvExportController.logs_csv',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'from_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'to_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['address'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['to', 'from'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/nft',
    operationId: 'BlockScoutWeb.API.V2.AddressController.nft_list',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            {
              type: 'string',
              pattern: '^\\[?(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984)(,(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984))*\\]?$',
            },
          ],
        },
      },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      {
        name: 'token_contract_address_hash',
        required: false,
        schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' },
      },
      {
        name: 'token_id',
        required: false,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
      {
        name: 'token_type',
        required: false,
        schema: { type: 'string', title: 'TokenType', enum: ['ERC-20', 'ERC-721', 'ERC-1155', 'ERC-404', 'ERC-7984'] },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/nft/collections',
    operationId: 'BlockScoutWeb.API.V2.AddressController.nft_collections',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            {
              type: 'string',
              pattern: '^\\[?(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984)(,(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984))*\\]?$',
            },
          ],
        },
      },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      {
        name: 'token_contract_address_hash',
        required: false,
        schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' },
      },
      {
        name: 'token_type',
        required: false,
        schema: { type: 'string', title: 'TokenType', enum: ['ERC-20', 'ERC-721', 'ERC-1155', 'ERC-404', 'ERC-7984'] },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/tabs-counters',
    operationId: 'BlockScoutWeb.API.V2.AddressController.tabs_counters',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/token-balances',
    operationId: 'BlockScoutWeb.API.V2.AddressController.token_balances',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/token-transfers',
    operationId: 'BlockScoutWeb.API.V2.AddressController.token_transfers',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'filter', required: false, schema: { type: 'string', enum: ['to', 'from'] } },
      {
        name: 'type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            {
              type: 'string',
              pattern: '^\\[?(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984)(,(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984))*\\]?$',
            },
          ],
        },
      },
      { name: 'token', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'batch_log_index', required: false, schema: { type: 'integer' } },
      { name: 'batch_block_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'batch_transaction_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'index_in_batch', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/token-transfers/csv',
    operationId: 'BlockScoutWeb.API.V2.CsvExportController.token_transfers_csv',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'from_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'to_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['address'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['to', 'from'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/tokens',
    operationId: 'BlockScoutWeb.API.V2.AddressController.tokens',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            {
              type: 'string',
              pattern: '^\\[?(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984)(,(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984))*\\]?$',
            },
          ],
        },
      },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      {
        name: 'fiat_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'FloatString', pattern: '^([1-9][0-9]*|0)(\\.[0-9]+)?$' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      { name: 'id', required: false, schema: { type: 'integer' } },
      {
        name: 'value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/transactions',
    operationId: 'BlockScoutWeb.API.V2.AddressController.transactions',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'filter', required: false, schema: { type: 'string', enum: ['to', 'from'] } },
      { name: 'sort', required: false, schema: { type: 'string', enum: ['block_number', 'value', 'fee'] } },
      { name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      {
        name: 'block_number',
        required: false,
        schema: {
          anyOf: [
            { type: 'integer' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'index',
        required: false,
        schema: {
          anyOf: [
            { type: 'integer' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      { name: 'inserted_at', required: false, schema: { type: 'string', format: 'date-time' } },
      { name: 'hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      {
        name: 'value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      { name: 'fee', required: false, schema: { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' } },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/transactions/csv',
    operationId: 'BlockScoutWeb.API.V2.CsvExportController.transactions_csv',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'from_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'to_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['address'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['to', 'from'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/addresses/{address_hash_param}/withdrawals',
    operationId: 'BlockScoutWeb.API.V2.AddressController.withdrawals',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/advanced-filters',
    operationId: 'BlockScoutWeb.API.V2.AdvancedFilterController.list',
    pathParams: [],
    queryParams: [
      { name: 'transaction_types', required: false, schema: { type: 'string', nullable: true } },
      { name: 'methods', required: false, schema: { type: 'string', nullable: true } },
      { name: 'age_from', required: false, schema: { type: 'string', nullable: true } },
      { name: 'age_to', required: false, schema: { type: 'string', nullable: true } },
      { name: 'from_address_hashes_to_include', required: false, schema: { type: 'string', nullable: true } },
      { name: 'from_address_hashes_to_exclude', required: false, schema: { type: 'string', nullable: true } },
      { name: 'to_address_hashes_to_include', required: false, schema: { type: 'string', nullable: true } },
      { name: 'to_address_hashes_to_exclude', required: false, schema: { type: 'string', nullable: true } },
      { name: 'address_relation', required: false, schema: { type: 'string', nullable: true } },
      { name: 'amount_from', required: false, schema: { type: 'string', nullable: true } },
      { name: 'amount_to', required: false, schema: { type: 'string', nullable: true } },
      { name: 'token_contract_address_hashes_to_include', required: false, schema: { type: 'string', nullable: true } },
      { name: 'token_contract_address_hashes_to_exclude', required: false, schema: { type: 'string', nullable: true } },
      { name: 'methods_names', required: false, schema: { type: 'string', nullable: true } },
      { name: 'token_contract_symbols_to_include', required: false, schema: { type: 'string', nullable: true } },
      { name: 'token_contract_symbols_to_exclude', required: false, schema: { type: 'string', nullable: true } },
      { name: 'block_number', required: false, schema: { type: 'string', pattern: '^([1-9][0-9]*|0)$' } },
      { name: 'transaction_index', required: false, schema: { type: 'string', pattern: '^([1-9][0-9]*|0)$' } },
      {
        name: 'internal_transaction_index',
        required: false,
        schema: {
          title: 'IntegerStringOrEmptyOrNullLiteral',
          oneOf: [
            { type: 'string', pattern: '^([1-9][0-9]*|0)$' },
            { type: 'string', enum: ['', 'null'] },
          ],
        },
      },
      {
        name: 'token_transfer_index',
        required: false,
        schema: {
          title: 'IntegerStringOrEmptyOrNullLiteral',
          oneOf: [
            { type: 'string', pattern: '^([1-9][0-9]*|0)$' },
            { type: 'string', enum: ['', 'null'] },
          ],
        },
      },
      {
        name: 'token_transfer_batch_index',
        required: false,
        schema: {
          title: 'IntegerStringOrEmptyOrNullLiteral',
          oneOf: [
            { type: 'string', pattern: '^([1-9][0-9]*|0)$' },
            { type: 'string', enum: ['', 'null'] },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/advanced-filters/csv',
    operationId: 'BlockScoutWeb.API.V2.AdvancedFilterController.list_csv',
    pathParams: [],
    queryParams: [
      { name: 'transaction_types', required: false, schema: { type: 'string', nullable: true } },
      { name: 'methods', required: false, schema: { type: 'string', nullable: true } },
      { name: 'age_from', required: false, schema: { type: 'string', nullable: true } },
      { name: 'age_to', required: false, schema: { type: 'string', nullable: true } },
      { name: 'from_address_hashes_to_include', required: false, schema: { type: 'string', nullable: true } },
      { name: 'from_address_hashes_to_exclude', required: false, schema: { type: 'string', nullable: true } },
      { name: 'to_address_hashes_to_include', required: false, schema: { type: 'string', nullable: true } },
      { name: 'to_address_hashes_to_exclude', required: false, schema: { type: 'string', nullable: true } },
      { name: 'address_relation', required: false, schema: { type: 'string', nullable: true } },
      { name: 'amount_from', required: false, schema: { type: 'string', nullable: true } },
      { name: 'amount_to', required: false, schema: { type: 'string', nullable: true } },
      { name: 'token_contract_address_hashes_to_include', required: false, schema: { type: 'string', nullable: true } },
      { name: 'token_contract_address_hashes_to_exclude', required: false, schema: { type: 'string', nullable: true } },
      { name: 'methods_names', required: false, schema: { type: 'string', nullable: true } },
      { name: 'token_contract_symbols_to_include', required: false, schema: { type: 'string', nullable: true } },
      { name: 'token_contract_symbols_to_exclude', required: false, schema: { type: 'string', nullable: true } },
      { name: 'block_number', required: false, schema: { type: 'string', pattern: '^([1-9][0-9]*|0)$' } },
      { name: 'transaction_index', required: false, schema: { type: 'string', pattern: '^([1-9][0-9]*|0)$' } },
      {
        name: 'internal_transaction_index',
        required: false,
        schema: {
          title: 'IntegerStringOrEmptyOrNullLiteral',
          oneOf: [
            { type: 'string', pattern: '^([1-9][0-9]*|0)$' },
            { type: 'string', enum: ['', 'null'] },
          ],
        },
      },
      {
        name: 'token_transfer_index',
        required: false,
        schema: {
          title: 'IntegerStringOrEmptyOrNullLiteral',
          oneOf: [
            { type: 'string', pattern: '^([1-9][0-9]*|0)$' },
            { type: 'string', enum: ['', 'null'] },
          ],
        },
      },
      {
        name: 'token_transfer_batch_index',
        required: false,
        schema: {
          title: 'IntegerStringOrEmptyOrNullLiteral',
          oneOf: [
            { type: 'string', pattern: '^([1-9][0-9]*|0)$' },
            { type: 'string', enum: ['', 'null'] },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/advanced-filters/methods',
    operationId: 'BlockScoutWeb.API.V2.AdvancedFilterController.list_methods',
    pathParams: [],
    queryParams: [{ name: 'q', required: false, schema: { type: 'string', nullable: true } }],
  },
  {
    template: '/api/v2/arbitrum/batches',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.batches',
    pathParams: [],
    queryParams: [
      { name: 'batch_numbers', required: false, schema: { type: 'array', items: { type: 'integer', minimum: '0' } } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'number', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/arbitrum/batches/count',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.batches_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/arbitrum/batches/da/anytrust/{data_hash}',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.batch_by_anytrust_da_info',
    pathParams: [{ name: 'data_hash', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } }],
    queryParams: [
      { name: 'type', required: false, schema: { type: 'string', enum: ['all'] } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'number', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/arbitrum/batches/da/celestia/{height}/{transaction_commitment}',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.batch_by_celestia_da_info',
    pathParams: [
      { name: 'height', required: true, schema: { type: 'integer', minimum: '0' } },
      { name: 'transaction_commitment', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/arbitrum/batches/da/eigenda/{data_hash}',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.batch_by_eigenda_da_info',
    pathParams: [{ name: 'data_hash', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } }],
    queryParams: [
      { name: 'type', required: false, schema: { type: 'string', enum: ['all'] } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'number', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/arbitrum/batches/{batch_number}',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.batch',
    pathParams: [{ name: 'batch_number', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [],
  },
  {
    template: '/api/v2/arbitrum/messages/claim/{message_id}',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.claim_message',
    pathParams: [{ name: 'message_id', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [],
  },
  {
    template: '/api/v2/arbitrum/messages/withdrawals/{transaction_hash}',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.withdrawals',
    pathParams: [
      { name: 'transaction_hash', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/arbitrum/messages/{direction}',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.messages',
    pathParams: [{ name: 'direction', required: true, schema: { type: 'string', enum: ['from-rollup', 'to-rollup'] } }],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'id', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/arbitrum/messages/{direction}/count',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.messages_count',
    pathParams: [{ name: 'direction', required: true, schema: { type: 'string', enum: ['from-rollup', 'to-rollup'] } }],
    queryParams: [],
  },
  {
    template: '/api/v2/beacon/deposits',
    operationId: 'BlockScoutWeb.API.V2.Ethereum.DepositController.list',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer', minimum: '0', maximum: '9223372036854775807' } },
    ],
  },
  {
    template: '/api/v2/beacon/deposits/count',
    operationId: 'BlockScoutWeb.API.V2.Ethereum.DepositController.count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/blocks',
    operationId: 'BlockScoutWeb.API.V2.BlockController.blocks',
    pathParams: [],
    queryParams: [
      { name: 'type', required: false, schema: { type: 'string', enum: ['uncle', 'reorg', 'block'], default: 'block' } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/blocks/arbitrum-batch/{batch_number_param}',
    operationId: 'BlockScoutWeb.API.V2.BlockController.arbitrum_batch',
    pathParams: [{ name: 'batch_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/blocks/optimism-batch/{batch_number_param}',
    operationId: 'BlockScoutWeb.API.V2.BlockController.optimism_batch',
    pathParams: [{ name: 'batch_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/blocks/scroll-batch/{batch_number_param}',
    operationId: 'BlockScoutWeb.API.V2.BlockController.scroll_batch',
    pathParams: [{ name: 'batch_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/blocks/{block_hash_or_number_param}',
    operationId: 'BlockScoutWeb.API.V2.BlockController.block',
    pathParams: [
      {
        name: 'block_hash_or_number_param',
        required: true,
        schema: {
          anyOf: [
            { type: 'integer', minimum: '0' },
            { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' },
          ],
        },
      },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/blocks/{block_hash_or_number_param}/beacon/deposits',
    operationId: 'BlockScoutWeb.API.V2.BlockController.beacon_deposits',
    pathParams: [
      {
        name: 'block_hash_or_number_param',
        required: true,
        schema: {
          anyOf: [
            { type: 'integer', minimum: '0' },
            { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' },
          ],
        },
      },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/blocks/{block_hash_or_number_param}/internal-transactions',
    operationId: 'BlockScoutWeb.API.V2.BlockController.internal_transactions',
    pathParams: [
      {
        name: 'block_hash_or_number_param',
        required: true,
        schema: {
          anyOf: [
            { type: 'integer', minimum: '0' },
            { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' },
          ],
        },
      },
    ],
    queryParams: [
      {
        name: 'internal_type',
        required: false,
        schema: { type: 'string', enum: ['call', 'create', 'create2', 'reward', 'selfdestruct', 'stop', 'invalid'] },
      },
      {
        name: 'call_type',
        required: false,
        schema: { type: 'string', enum: ['call', 'callcode', 'delegatecall', 'staticcall', 'invalid'] },
      },
      { name: 'include_zero_value', required: false, schema: { type: 'boolean', default: true } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'transaction_index', required: false, schema: { type: 'integer' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/blocks/{block_hash_or_number_param}/transactions',
    operationId: 'BlockScoutWeb.API.V2.BlockController.transactions',
    pathParams: [
      {
        name: 'block_hash_or_number_param',
        required: true,
        schema: {
          anyOf: [
            { type: 'integer', minimum: '0' },
            { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' },
          ],
        },
      },
    ],
    queryParams: [
      {
        name: 'type',
        required: false,
        schema: { type: 'string', enum: ['coin_transfer', 'contract_call', 'contract_creation', 'token_transfer', 'token_creation'] },
      },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/blocks/{block_hash_or_number_param}/withdrawals',
    operationId: 'BlockScoutWeb.API.V2.BlockController.withdrawals',
    pathParams: [
      {
        name: 'block_hash_or_number_param',
        required: true,
        schema: {
          anyOf: [
            { type: 'integer', minimum: '0' },
            { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' },
          ],
        },
      },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/blocks/{block_number_param}/countdown',
    operationId: 'BlockScoutWeb.API.V2.BlockController.block_countdown',
    pathParams: [{ name: 'block_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [],
  },
  {
    template: '/api/v2/celo/epochs',
    operationId: 'BlockScoutWeb.API.V2.CeloController.epochs',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'number', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/celo/epochs/{number}',
    operationId: 'BlockScoutWeb.API.V2.CeloController.epoch',
    pathParams: [{ name: 'number', required: true, schema: { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' } }],
    queryParams: [],
  },
  {
    template: '/api/v2/celo/epochs/{number}/election-rewards/{type}',
    operationId: 'BlockScoutWeb.API.V2.CeloController.election_rewards',
    pathParams: [
      { name: 'number', required: true, schema: { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' } },
      {
        name: 'type',
        required: true,
        schema: {
          type: 'string',
          title: 'CeloElectionRewardType',
          enum: ['voter', 'validator', 'group', 'delegated_payment', 'delegated-payment'],
        },
      },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      {
        name: 'amount',
        required: false,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
      { name: 'account_address_hash', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'associated_account_address_hash',
        required: false,
        schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' },
      },
    ],
  },
  {
    template: '/api/v2/csv-exports/{uuid_param}',
    operationId: 'BlockScoutWeb.API.V2.CsvExportController.get_csv_export',
    pathParams: [
      {
        name: 'uuid_param',
        required: true,
        schema: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', format: 'uuid' },
      },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/internal-transactions',
    operationId: 'BlockScoutWeb.API.V2.InternalTransactionController.internal_transactions',
    pathParams: [],
    queryParams: [
      { name: 'transaction_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'limit', required: false, schema: { type: 'integer', nullable: true } },
      { name: 'include_zero_value', required: false, schema: { type: 'boolean', default: true } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'transaction_index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/main-page/arbitrum/batches/committed',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.batches_committed',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/main-page/arbitrum/batches/latest-number',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.batch_latest_number',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/main-page/arbitrum/messages/to-rollup',
    operationId: 'BlockScoutWeb.API.V2.ArbitrumController.recent_messages_to_l2',
    pathParams: [],
    queryParams: [],
  },
  { template: '/api/v2/main-page/blocks', operationId: 'BlockScoutWeb.API.V2.MainPageController.blocks', pathParams: [], queryParams: [] },
  {
    template: '/api/v2/main-page/indexing-status',
    operationId: 'BlockScoutWeb.API.V2.MainPageController.indexing_status',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/main-page/optimism-deposits',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.main_page_deposits',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/main-page/transactions',
    operationId: 'BlockScoutWeb.API.V2.MainPageController.transactions',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/main-page/transactions/watchlist',
    operationId: 'BlockScoutWeb.API.V2.MainPageController.watchlist_transactions',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/main-page/zksync/batches/confirmed',
    operationId: 'BlockScoutWeb.API.V2.ZkSyncController.batches_confirmed',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/main-page/zksync/batches/latest-number',
    operationId: 'BlockScoutWeb.API.V2.ZkSyncController.batch_latest_number',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/optimism/batches',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.batches',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'id', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/optimism/batches/count',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.batches_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/optimism/batches/da/celestia/{height}/{commitment}',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.batch_by_celestia_blob',
    pathParams: [
      { name: 'height', required: true, schema: { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' } },
      { name: 'commitment', required: true, schema: { type: 'string', title: 'HexData', pattern: '^0x([A-Fa-f0-9]*)$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/optimism/batches/{number}',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.batch_by_number',
    pathParams: [{ name: 'number', required: true, schema: { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' } }],
    queryParams: [],
  },
  {
    template: '/api/v2/optimism/deposits',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.deposits',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'l1_block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'transaction_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
  },
  {
    template: '/api/v2/optimism/deposits/count',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.deposits_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/optimism/games',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.games',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/optimism/games/count',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.games_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/optimism/output-roots',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.output_roots',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/optimism/output-roots/count',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.output_roots_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/optimism/withdrawals',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.withdrawals',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'nonce', required: false, schema: { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' } },
    ],
  },
  {
    template: '/api/v2/optimism/withdrawals/count',
    operationId: 'BlockScoutWeb.API.V2.OptimismController.withdrawals_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/proxy/account-abstraction/accounts',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.accounts',
    pathParams: [],
    queryParams: [
      { name: 'factory', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'page_size', required: false, schema: { type: 'integer', minimum: '1', maximum: '50' } },
      { name: 'page_token', required: false, schema: { type: 'string' } },
    ],
  },
  {
    template: '/api/v2/proxy/account-abstraction/accounts/{address_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.account',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/proxy/account-abstraction/bundlers',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.bundlers',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'page_size', required: false, schema: { type: 'integer', minimum: '1', maximum: '50' } },
      { name: 'page_token', required: false, schema: { type: 'string' } },
    ],
  },
  {
    template: '/api/v2/proxy/account-abstraction/bundlers/{address_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.bundler',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/proxy/account-abstraction/bundles',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.bundles',
    pathParams: [],
    queryParams: [
      { name: 'bundler', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'entry_point', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'page_size', required: false, schema: { type: 'integer', minimum: '1', maximum: '50' } },
      { name: 'page_token', required: false, schema: { type: 'string' } },
    ],
  },
  {
    template: '/api/v2/proxy/account-abstraction/factories',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.factories',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'page_size', required: false, schema: { type: 'integer', minimum: '1', maximum: '50' } },
      { name: 'page_token', required: false, schema: { type: 'string' } },
    ],
  },
  {
    template: '/api/v2/proxy/account-abstraction/factories/{address_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.factory',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/proxy/account-abstraction/operations',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.operations',
    pathParams: [],
    queryParams: [
      { name: 'sender', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'bundler', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'paymaster', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'factory', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'transaction_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'entry_point', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'bundle_index', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'page_size', required: false, schema: { type: 'integer', minimum: '1', maximum: '50' } },
      { name: 'page_token', required: false, schema: { type: 'string' } },
    ],
  },
  {
    template: '/api/v2/proxy/account-abstraction/operations/{operation_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.operation',
    pathParams: [
      { name: 'operation_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/proxy/account-abstraction/operations/{operation_hash_param}/summary',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.summary',
    pathParams: [
      { name: 'operation_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [{ name: 'just_request_body', required: false, schema: { type: 'boolean' } }],
  },
  {
    template: '/api/v2/proxy/account-abstraction/paymasters',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.paymasters',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'page_size', required: false, schema: { type: 'integer', minimum: '1', maximum: '50' } },
      { name: 'page_token', required: false, schema: { type: 'string' } },
    ],
  },
  {
    template: '/api/v2/proxy/account-abstraction/paymasters/{address_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.paymaster',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/proxy/account-abstraction/status',
    operationId: 'BlockScoutWeb.API.V2.Proxy.AccountAbstractionController.status',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/scroll/batches',
    operationId: 'BlockScoutWeb.API.V2.ScrollController.batches',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'number', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/scroll/batches/count',
    operationId: 'BlockScoutWeb.API.V2.ScrollController.batches_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/scroll/batches/{number}',
    operationId: 'BlockScoutWeb.API.V2.ScrollController.batch',
    pathParams: [{ name: 'number', required: true, schema: { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' } }],
    queryParams: [],
  },
  {
    template: '/api/v2/scroll/deposits',
    operationId: 'BlockScoutWeb.API.V2.ScrollController.deposits',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'id', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/scroll/deposits/count',
    operationId: 'BlockScoutWeb.API.V2.ScrollController.deposits_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/scroll/withdrawals',
    operationId: 'BlockScoutWeb.API.V2.ScrollController.withdrawals',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'id', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/scroll/withdrawals/count',
    operationId: 'BlockScoutWeb.API.V2.ScrollController.withdrawals_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/search',
    operationId: 'BlockScoutWeb.API.V2.SearchController.search (2)',
    pathParams: [],
    queryParams: [
      { name: 'q', required: false, schema: { type: 'string', nullable: true } },
      { name: 'next_page_params_type', required: false, schema: { type: 'string' } },
      { name: 'label', required: false, schema: { type: 'object' } },
      { name: 'token', required: false, schema: { type: 'object' } },
      { name: 'contract', required: false, schema: { type: 'object' } },
      { name: 'tac_operation', required: false, schema: { type: 'object' } },
      { name: 'metadata_tag', required: false, schema: { type: 'object' } },
      { name: 'block', required: false, schema: { type: 'object' } },
      { name: 'blob', required: false, schema: { type: 'object' } },
      { name: 'user_operation', required: false, schema: { type: 'object' } },
      { name: 'address', required: false, schema: { type: 'object' } },
      { name: 'ens_domain', required: false, schema: { type: 'object' } },
    ],
  },
  {
    template: '/api/v2/search/check-redirect',
    operationId: 'BlockScoutWeb.API.V2.SearchController.check_redirect',
    pathParams: [],
    queryParams: [{ name: 'q', required: false, schema: { type: 'string', nullable: true } }],
  },
  {
    template: '/api/v2/search/quick',
    operationId: 'BlockScoutWeb.API.V2.SearchController.quick_search',
    pathParams: [],
    queryParams: [{ name: 'q', required: false, schema: { type: 'string', nullable: true } }],
  },
  {
    template: '/api/v2/shibarium/deposits',
    operationId: 'BlockScoutWeb.API.V2.ShibariumController.deposits',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/shibarium/deposits/count',
    operationId: 'BlockScoutWeb.API.V2.ShibariumController.deposits_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/shibarium/withdrawals',
    operationId: 'BlockScoutWeb.API.V2.ShibariumController.withdrawals',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/shibarium/withdrawals/count',
    operationId: 'BlockScoutWeb.API.V2.ShibariumController.withdrawals_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/smart-contracts/',
    operationId: 'BlockScoutWeb.API.V2.SmartContractController.smart_contracts_list',
    pathParams: [],
    queryParams: [
      { name: 'sort', required: false, schema: { type: 'string', enum: ['balance', 'transactions_count'] } },
      { name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } },
      { name: 'q', required: false, schema: { type: 'string', nullable: true } },
      {
        name: 'filter',
        required: false,
        schema: { type: 'string', title: 'Language', enum: ['solidity', 'vyper', 'yul', 'geas', 'stylus_rust'] },
      },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'smart_contract_id', required: false, schema: { type: 'integer' } },
      {
        name: 'coin_balance',
        required: false,
        schema: {
          anyOf: [
            { type: 'integer' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      { name: 'hash', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'transactions_count',
        required: false,
        schema: {
          anyOf: [
            { type: 'integer' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/smart-contracts/counters',
    operationId: 'BlockScoutWeb.API.V2.SmartContractController.smart_contracts_counters',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/smart-contracts/{address_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.SmartContractController.smart_contract',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/smart-contracts/{address_hash_param}/audit-reports',
    operationId: 'BlockScoutWeb.API.V2.SmartContractController.audit_reports_list',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  { template: '/api/v2/stats', operationId: 'BlockScoutWeb.API.V2.StatsController.stats', pathParams: [], queryParams: [] },
  {
    template: '/api/v2/stats/charts/market',
    operationId: 'BlockScoutWeb.API.V2.StatsController.market_chart',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/stats/charts/secondary-coin-market',
    operationId: 'BlockScoutWeb.API.V2.StatsController.secondary_coin_market_chart',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/stats/charts/transactions',
    operationId: 'BlockScoutWeb.API.V2.StatsController.transactions_chart',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/stats/hot-smart-contracts',
    operationId: 'BlockScoutWeb.API.V2.StatsController.hot_smart_contracts',
    pathParams: [],
    queryParams: [
      { name: 'sort', required: false, schema: { type: 'string', enum: ['transactions_count', 'total_gas_used'] } },
      { name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } },
      { name: 'scale', required: true, schema: { type: 'string', enum: ['5m', '1h', '3h', '1d', '7d', '30d'] } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'transactions_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'total_gas_used', required: false, schema: { type: 'integer', minimum: '0' } },
      {
        name: 'contract_address_hash',
        required: false,
        schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' },
      },
    ],
  },
  {
    template: '/api/v2/token-transfers',
    operationId: 'BlockScoutWeb.API.V2.TokenTransferController.token_transfers',
    pathParams: [],
    queryParams: [
      {
        name: 'type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            {
              type: 'string',
              pattern: '^\\[?(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984)(,(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984))*\\]?$',
            },
          ],
        },
      },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'batch_log_index', required: false, schema: { type: 'integer' } },
      { name: 'batch_block_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'batch_transaction_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'index_in_batch', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/tokens/',
    operationId: 'BlockScoutWeb.API.V2.TokenController.tokens_list',
    pathParams: [],
    queryParams: [
      {
        name: 'type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            {
              type: 'string',
              pattern: '^\\[?(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984)(,(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984))*\\]?$',
            },
          ],
        },
      },
      { name: 'q', required: false, schema: { type: 'string', nullable: true } },
      { name: 'limit', required: false, schema: { type: 'integer', nullable: true } },
      { name: 'sort', required: false, schema: { type: 'string', enum: ['fiat_value', 'holders_count', 'circulating_market_cap'] } },
      { name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      {
        name: 'contract_address_hash',
        required: false,
        schema: { type: 'string', title: 'AddressHashNullable', pattern: '^0x([A-Fa-f0-9]{40})$', nullable: true },
      },
      {
        name: 'fiat_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'FloatString', pattern: '^([1-9][0-9]*|0)(\\.[0-9]+)?$' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'holders_count',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      { name: 'is_name_null', required: false, schema: { type: 'boolean' } },
      {
        name: 'market_cap',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'FloatString', pattern: '^([1-9][0-9]*|0)(\\.[0-9]+)?$' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      { name: 'name', required: false, schema: { type: 'string' } },
    ],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.TokenController.token',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/counters',
    operationId: 'BlockScoutWeb.API.V2.TokenController.counters',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/holders',
    operationId: 'BlockScoutWeb.API.V2.TokenController.holders',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'address_hash', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/holders/csv',
    operationId: 'BlockScoutWeb.API.V2.CsvExportController.export_token_holders',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'from_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'to_period',
        required: false,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['address'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['to', 'from'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/instances',
    operationId: 'BlockScoutWeb.API.V2.TokenController.instances',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'holder_address_hash', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      {
        name: 'unique_token',
        required: false,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
    ],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/instances/{token_id_param}',
    operationId: 'BlockScoutWeb.API.V2.TokenController.instance',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'token_id_param',
        required: true,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/instances/{token_id_param}/holders',
    operationId: 'BlockScoutWeb.API.V2.TokenController.holders_by_instance',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'token_id_param',
        required: true,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'address_hash', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'token_id',
        required: false,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
      {
        name: 'value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'IntegerString', pattern: '^-?([1-9][0-9]*|0)$' },
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/instances/{token_id_param}/media-type',
    operationId: 'BlockScoutWeb.API.V2.TokenController.media_type',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'token_id_param',
        required: true,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/instances/{token_id_param}/transfers',
    operationId: 'BlockScoutWeb.API.V2.TokenController.transfers_by_instance',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'token_id_param',
        required: true,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      {
        name: 'token_id',
        required: false,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
    ],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/instances/{token_id_param}/transfers-count',
    operationId: 'BlockScoutWeb.API.V2.TokenController.transfers_count_by_instance',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      {
        name: 'token_id_param',
        required: true,
        schema: { type: 'string', title: 'IntegerStringNullable', pattern: '^-?([1-9][0-9]*|0)$', nullable: true },
      },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/transfers',
    operationId: 'BlockScoutWeb.API.V2.TokenController.transfers',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'batch_log_index', required: false, schema: { type: 'integer' } },
      { name: 'batch_block_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'batch_transaction_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'index_in_batch', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/tokens/{address_hash_param}/transfers/csv',
    operationId: 'BlockScoutWeb.API.V2.CsvExportController.export_token_transfers',
    pathParams: [
      { name: 'address_hash_param', required: true, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
    ],
    queryParams: [
      {
        name: 'from_period',
        required: true,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'to_period',
        required: true,
        schema: {
          anyOf: [
            {
              type: 'string',
              pattern:
                '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])(?:T(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d(?:(?::|%3A)[0-5]\\d(?:\\.\\d{1,9})?)?)?(?:Z|(?:\\+|%2B|-)(?:[01]\\d|2[0-3])(?:(?::|%3A)[0-5]\\d)?)?)?$',
            },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['address'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
      {
        name: 'filter_value',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', enum: ['to', 'from'], nullable: true },
            { type: 'string', title: 'NullString', pattern: '^null$' },
          ],
        },
      },
    ],
  },
  {
    template: '/api/v2/transactions',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.transactions',
    pathParams: [],
    queryParams: [
      { name: 'filter', required: false, schema: { type: 'string', enum: ['validated', 'pending'] } },
      { name: 'type', required: false, schema: { type: 'string', enum: ['blob_transaction'] } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'inserted_at', required: false, schema: { type: 'string', format: 'date-time' } },
    ],
  },
  {
    template: '/api/v2/transactions/arbitrum-batch/{batch_number_param}',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.arbitrum_batch',
    pathParams: [{ name: 'batch_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/transactions/execution-node/{execution_node_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.execution_node',
    pathParams: [
      {
        name: 'execution_node_hash_param',
        required: true,
        schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' },
      },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/transactions/optimism-batch/{batch_number_param}',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.optimism_batch',
    pathParams: [{ name: 'batch_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/transactions/scroll-batch/{batch_number_param}',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.scroll_batch',
    pathParams: [{ name: 'batch_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/transactions/stats',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.stats',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/transactions/watchlist',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.watchlist_transactions',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/transactions/zksync-batch/{batch_number_param}',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.zksync_batch',
    pathParams: [{ name: 'batch_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.transaction',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/beacon/deposits',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.beacon_deposits',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/blobs',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.blobs',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/external-transactions',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.external_transactions',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/fhe-operations',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.fhe_operations',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/internal-transactions',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.internal_transactions',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [
      { name: 'include_zero_value', required: false, schema: { type: 'boolean', default: true } },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'transaction_index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/logs',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.logs',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/raw-trace',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.raw_trace',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/state-changes',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.state_changes',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'state_changes_count', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/summary',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.summary',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [{ name: 'just_request_body', required: false, schema: { type: 'boolean' } }],
  },
  {
    template: '/api/v2/transactions/{transaction_hash_param}/token-transfers',
    operationId: 'BlockScoutWeb.API.V2.TransactionController.token_transfers',
    pathParams: [
      { name: 'transaction_hash_param', required: true, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
    ],
    queryParams: [
      {
        name: 'type',
        required: false,
        schema: {
          anyOf: [
            { type: 'string', title: 'EmptyString', minLength: 0, maxLength: 0 },
            {
              type: 'string',
              pattern: '^\\[?(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984)(,(ERC-20|ERC-721|ERC-1155|ERC-404|ERC-7984))*\\]?$',
            },
          ],
        },
      },
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'block_number', required: false, schema: { type: 'integer', minimum: '0' } },
      { name: 'batch_log_index', required: false, schema: { type: 'integer' } },
      { name: 'batch_block_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'batch_transaction_hash', required: false, schema: { type: 'string', title: 'FullHash', pattern: '^0x([A-Fa-f0-9]{64})$' } },
      { name: 'index_in_batch', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/validators/stability',
    operationId: 'BlockScoutWeb.API.V2.ValidatorController.stability_validators_list',
    pathParams: [],
    queryParams: [
      {
        name: 'state_filter',
        required: false,
        schema: { type: 'string', pattern: '^(active|probation|inactive)(,(active|probation|inactive))*$' },
      },
      { name: 'sort', required: false, schema: { type: 'string', enum: ['state', 'address_hash', 'blocks_validated'] } },
      { name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } },
      { name: 'state', required: false, schema: { type: 'string', enum: ['active', 'probation', 'inactive'] } },
      { name: 'address_hash', required: false, schema: { type: 'string', title: 'AddressHash', pattern: '^0x([A-Fa-f0-9]{40})$' } },
      { name: 'blocks_validated', required: false, schema: { type: 'integer', minimum: '0' } },
    ],
  },
  {
    template: '/api/v2/validators/stability/counters',
    operationId: 'BlockScoutWeb.API.V2.ValidatorController.stability_validators_counters',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/validators/zilliqa',
    operationId: 'BlockScoutWeb.API.V2.ValidatorController.zilliqa_validators_list',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
      { name: 'sort', required: false, schema: { type: 'string', enum: ['index'] } },
      { name: 'order', required: false, schema: { type: 'string', enum: ['asc', 'desc'] } },
    ],
  },
  {
    template: '/api/v2/validators/zilliqa/{bls_public_key}',
    operationId: 'BlockScoutWeb.API.V2.ValidatorController.zilliqa_validator',
    pathParams: [{ name: 'bls_public_key', required: true, schema: { type: 'string', title: 'HexData', pattern: '^0x([A-Fa-f0-9]*)$' } }],
    queryParams: [],
  },
  {
    template: '/api/v2/withdrawals',
    operationId: 'BlockScoutWeb.API.V2.WithdrawalController.withdrawals_list',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'index', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/withdrawals/counters',
    operationId: 'BlockScoutWeb.API.V2.WithdrawalController.withdrawals_counters',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/zksync/batches',
    operationId: 'BlockScoutWeb.API.V2.ZkSyncController.batches',
    pathParams: [],
    queryParams: [
      { name: 'items_count', required: false, schema: { type: 'integer', minimum: '1' } },
      { name: 'number', required: false, schema: { type: 'integer' } },
    ],
  },
  {
    template: '/api/v2/zksync/batches/count',
    operationId: 'BlockScoutWeb.API.V2.ZkSyncController.batches_count',
    pathParams: [],
    queryParams: [],
  },
  {
    template: '/api/v2/zksync/batches/{batch_number_param}',
    operationId: 'BlockScoutWeb.API.V2.ZkSyncController.batch',
    pathParams: [{ name: 'batch_number_param', required: true, schema: { type: 'integer', minimum: '0' } }],
    queryParams: [],
  },
];
