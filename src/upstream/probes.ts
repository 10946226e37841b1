// The requests that tell an upstream back from an ejection answers again (upstream/client.ts
// active probes). Each is cheap for the upstream and marked `x-egw-purpose: health-probe` so
// that its operator can tell it from client traffic (as finality/poll.ts marks head polls).
import type { ProbeRequest } from './client.js';

const PURPOSE = { 'x-egw-purpose': 'health-probe' };

/**
 * An explorer: one `eth_blockNumber` call, which Blockscout answers from memory (Explorer.EthRPC
 * in apps/explorer/lib/explorer/eth_rpc.ex; finality/poll.ts uses the same call).
 */
export const EXPLORER_PROBE: ProbeRequest = {
  method: 'POST',
  path: '/api/eth-rpc',
  headers: { accept: 'application/json', 'content-type': 'application/json', ...PURPOSE },
  body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
};

/**
 * A Blockscout service (stats, BENS, metadata, multichain search): the gRPC health check every
 * blockscout-rs service serves over HTTP as `GET /health?service=` (blockscout-rs
 * libs/blockscout-service-launcher, `HealthCheck`), answering `{"status":"SERVING"}`.
 */
export const SERVICE_PROBE: ProbeRequest = {
  method: 'GET',
  path: '/health?service=',
  headers: { accept: 'application/json', ...PURPOSE },
};
