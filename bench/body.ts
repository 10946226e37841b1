// The response body every variant serves: a token-balances answer of about 3 KB, built once,
// deterministically (no randomness), so every variant and every run sends the same bytes.

interface TokenBalance {
  token: {
    address: string;
    name: string;
    symbol: string;
    decimals: string;
    type: string;
    holders: string;
    exchange_rate: string | null;
    total_supply: string;
  };
  token_id: null;
  value: string;
}

function tokenBalance(i: number): TokenBalance {
  // Hex addresses derived from the index: looks like real data, and is stable between runs.
  const address = `0x${(0xa0b86991 + i * 7919).toString(16).padStart(40, '0')}`;
  return {
    token: {
      address,
      name: `Bench Token ${i}`,
      symbol: `BT${i}`,
      decimals: '18',
      type: 'ERC-20',
      holders: String(1_000 + i * 37),
      exchange_rate: i % 3 === 0 ? null : `${i}.${i * 13}`,
      total_supply: `${10 ** 9 + i}000000000000000000`,
    },
    token_id: null,
    value: `${i * 123_456_789}`,
  };
}

/** Enough balances for ~3 KB of JSON, the body size the reference measurements used. */
const TARGET_BYTES = 3_000;

function buildBody(): Buffer {
  const balances: TokenBalance[] = [];
  let json = '[]';
  while (Buffer.byteLength(json) < TARGET_BYTES) {
    balances.push(tokenBalance(balances.length));
    json = JSON.stringify(balances);
  }
  return Buffer.from(json, 'utf8');
}

/**
 * Serialised once at start-up and sent as a Buffer: the bench measures the request path, not
 * JSON.stringify or UTF-8 encoding.
 */
export const BODY: Buffer = buildBody();
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
