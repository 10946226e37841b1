// A Hardhat 2 project that verifies contracts/Counter.sol through the gateway with
// @nomicfoundation/hardhat-verify 2 (test/process/clients-hardhat.test.ts runs
// `npx hardhat verify` here; docs/clients.md copies its settings). The test passes:
//   GATEWAY_URL     the gateway's base URL (http://127.0.0.1:PORT)
//   GATEWAY_KEY     the API key
//   RPC_URL         the network's JSON-RPC (the test gives the gateway's, under a key of its own)
//   VERIFY_MODE     `etherscan` (the default) or `blockscout`: which of hardhat-verify's verifiers runs
//   HARDHAT_OUT     where compiled artifacts and Hardhat's cache go (outside the repository)
const path = require('node:path');
const { subtask } = require('hardhat/config');
const { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD } = require('hardhat/builtin-tasks/task-names');
require('@nomicfoundation/hardhat-verify');

const GATEWAY = process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080';
const KEY = process.env.GATEWAY_KEY ?? '';
const BLOCKSCOUT = process.env.VERIFY_MODE === 'blockscout';
const RPC_URL = process.env.RPC_URL ?? `${GATEWAY}/1/json-rpc?apikey=${KEY}`;
const OUT = process.env.HARDHAT_OUT ?? path.join(__dirname, '.hardhat-out');

// solc from the npm package `solc` (solcjs), offline: Hardhat's documented override of the
// compiler download, the subtask TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD
// (https://hardhat.org/hardhat-runner/docs/other-guides/using-custom-solc). package.json pins
// solc to 0.8.37, whose soljson.js reports this long version (`require('solc').version()`).
const SOLC_VERSION = '0.8.37';
const SOLC_LONG_VERSION = '0.8.37+commit.f401782d';
subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args, _hre, runSuper) => {
  if (args.solcVersion !== SOLC_VERSION) return runSuper(args);
  return {
    compilerPath: require.resolve('solc/soljson.js'),
    isSolcJs: true,
    version: SOLC_VERSION,
    longVersion: SOLC_LONG_VERSION,
  };
});

module.exports = {
  solidity: SOLC_VERSION,
  paths: { artifacts: path.join(OUT, 'artifacts'), cache: path.join(OUT, 'cache') },
  networks: {
    // hardhat-verify reads eth_chainId and eth_getCode from the network: the gateway's JSON-RPC.
    gateway: { url: RPC_URL },
  },
  // Etherscan mode: the key per network (an object). A single string makes hardhat-verify 2 call
  // Etherscan's V2 API (api.etherscan.io) whatever apiURL says (src/internal/etherscan.ts).
  etherscan: {
    enabled: !BLOCKSCOUT,
    apiKey: { gateway: KEY },
    customChains: [
      {
        network: 'gateway',
        chainId: 1,
        urls: { apiURL: `${GATEWAY}/1/api`, browserURL: 'https://eth.blockscout.com' },
      },
    ],
  },
  // Blockscout mode: hardhat-verify sends `apikey=api_key` and drops apiURL's query on its GETs,
  // so the key goes in apiURL's path (`/key/KEY/...`, docs/clients.md).
  blockscout: {
    enabled: BLOCKSCOUT,
    customChains: [
      {
        network: 'gateway',
        chainId: 1,
        urls: { apiURL: `${GATEWAY}/key/${KEY}/1/api`, browserURL: 'https://eth.blockscout.com' },
      },
    ],
  },
  sourcify: { enabled: false },
};
