// How many blocks behind a chain's head its data stops changing: `chains.<id>.finality.depth`,
// else the figure for a known chain id below, else a conservative default. Pure.

/**
 * The default for a chain not listed: 1,024 blocks, the window eRPC treats as unfinalized on a
 * chain without a `finalized` tag, "decided based on historical performance on real-world worst
 * reorgs (e.g. on Polygon chain)" (https://docs.erpc.cloud/config/database).
 */
export const DEFAULT_FINALITY_DEPTH = 1_024;

/**
 * Known chains. Ethereum's proof of stake finalises a checkpoint after two epochs of 32 slots
 * (https://ethereum.org/en/developers/docs/consensus-mechanisms/pos/#finality): 64 blocks, on
 * mainnet and on its test networks alike. Gnosis Chain runs the same protocol with 16-slot epochs
 * (https://docs.gnosischain.com/about/specs/consensus/): 32 blocks; 64 is kept there too, for
 * margin. Rollups are final when their batch is final on Ethereum, some 15 to 30 minutes after
 * the block (https://docs.optimism.io/stack/transactions/transaction-finality,
 * https://docs.arbitrum.io/how-arbitrum-works/deep-dives/transaction-lifecycle): their depth is
 * that time in blocks, at 2 s (OP Stack) and 0.25 s (Arbitrum) per block.
 */
const KNOWN_DEPTHS: Readonly<Record<string, number>> = {
  '1': 64, // Ethereum
  '11155111': 64, // Sepolia
  '17000': 64, // Holesky
  '560048': 64, // Hoodi
  '100': 64, // Gnosis
  '10': 900, // OP Mainnet: 30 minutes of 2 s blocks
  '8453': 900, // Base: 30 minutes of 2 s blocks
  '42161': 7_200, // Arbitrum One: 30 minutes of 0.25 s blocks
  '137': DEFAULT_FINALITY_DEPTH, // Polygon PoS: the case the default is drawn from
};

/** The depth for a chain: what its configuration says, else its known figure, else the default. */
export function finalityDepth(chainId: string, configured: number | undefined): number {
  return configured ?? KNOWN_DEPTHS[chainId] ?? DEFAULT_FINALITY_DEPTH;
}
