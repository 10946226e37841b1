// From a request path to its route, built once from the route table: a segment trie for v2
// (a few map lookups per segment, whatever the number of routes), one for the service routes
// under a chain and one for those under /services/, and a map for legacy actions.
import { ROUTE_TABLE, type ModuleRouteSpec, type PathSegment, type ServiceRouteSpec, type V2RouteSpec } from './table.js';

interface TrieNode<R> {
  readonly literals: Map<string, TrieNode<R>>;
  /** One child for every parameter at this position: the names stay on the routes, which may differ. */
  param: TrieNode<R> | undefined;
  route: R | undefined;
}

const node = <R>(): TrieNode<R> => ({ literals: new Map(), param: undefined, route: undefined });

function buildTrie<R extends { readonly documentPath?: string; readonly template?: string }>(
  routes: readonly { route: R; segments: readonly PathSegment[] }[],
): TrieNode<R> {
  const root = node<R>();
  for (const { route, segments } of routes) {
    let at = root;
    for (const segment of segments) {
      if (typeof segment === 'string') {
        let next = at.literals.get(segment);
        if (!next) at.literals.set(segment, (next = node()));
        at = next;
      } else {
        at = at.param ??= node();
      }
    }
    // Two templates with the same shape (literals, and slots wherever named) could never be told apart.
    const what = (r: R) => r.template ?? r.documentPath;
    if (at.route) throw new Error(`${what(route)} and ${what(at.route)} match the same paths`);
    at.route = route;
  }
  return root;
}

const V2_ROOT = buildTrie(
  ROUTE_TABLE.flatMap((spec) => {
    if (spec.kind !== 'v2') return [];
    const [api, v2, ...rest] = spec.segments;
    if (api !== 'api' || v2 !== 'v2') throw new Error(`${spec.template} is not under /api/v2/`);
    return [{ route: spec, segments: rest }];
  }),
);

const services = ROUTE_TABLE.filter((r): r is ServiceRouteSpec => r.kind === 'service');
/** Service routes under a chain, by the path after `/{chain_id}`. */
const CHAIN_SERVICES_ROOT = buildTrie(
  services.filter((r) => r.documentPath.startsWith('/{chain_id}/')).map((route) => ({ route, segments: route.match })),
);
/** Service routes under `/services`, by the path after it. */
const SHARED_SERVICES_ROOT = buildTrie(
  services.filter((r) => r.documentPath.startsWith('/services/')).map((route) => ({ route, segments: route.match })),
);

function walk<R>(at: TrieNode<R>, segments: readonly string[], i: number, params: string[]): R | undefined {
  const segment = segments[i];
  if (segment === undefined) return at.route;
  // Literal first; when that branch holds no route for the rest of the path, the parameter
  // branch (`arbitrum/messages/claim` is messages in direction "claim", not a claim without id).
  const literal = at.literals.get(segment);
  if (literal) {
    const found = walk(literal, segments, i + 1, params);
    if (found) return found;
  }
  if (at.param) {
    params.push(segment);
    const found = walk(at.param, segments, i + 1, params);
    if (found) return found;
    params.pop();
  }
  return undefined;
}

export interface V2Match {
  spec: V2RouteSpec;
  /** The raw (still percent-encoded) values of the template's slots, in template order. */
  params: string[];
}

/**
 * The v2 route of a path after `/api/v2` (`blocks/19/transactions`). Empty segments are
 * dropped, as Phoenix splits paths, so a trailing slash or `//` matches the same route.
 * Literal segments compare as sent (Phoenix matches them undecoded, case-sensitively).
 */
export function matchV2(pathAfterApiV2: string): V2Match | undefined {
  const segments = pathAfterApiV2.split('/').filter((s) => s !== '');
  const params: string[] = [];
  const spec = walk(V2_ROOT, segments, 0, params);
  return spec ? { spec, params } : undefined;
}

export interface ServiceMatch {
  spec: ServiceRouteSpec;
  /** The raw (still percent-encoded) values of the template's slots, in template order. */
  params: string[];
}

/**
 * The service route of a path after `/{chain_id}` (`under: 'chain'`: `/stats-service/api/v1/lines`,
 * `/api/v1/search`) or after `/services` (`/bens/api/v1/protocols`); empty segments dropped, as
 * for v2.
 */
export function matchService(under: 'chain' | 'services', path: string): ServiceMatch | undefined {
  const segments = path.split('/').filter((s) => s !== '');
  const params: string[] = [];
  const spec = walk(under === 'chain' ? CHAIN_SERVICES_ROOT : SHARED_SERVICES_ROOT, segments, 0, params);
  return spec ? { spec, params } : undefined;
}

const LEGACY: ReadonlyMap<string, ReadonlyMap<string, ModuleRouteSpec>> = (() => {
  const modules = new Map<string, Map<string, ModuleRouteSpec>>();
  for (const spec of ROUTE_TABLE) {
    if (spec.kind === 'v2' || spec.kind === 'rpc' || spec.kind === 'service') continue;
    const module = spec.module.toLowerCase();
    let actions = modules.get(module);
    if (!actions) modules.set(module, (actions = new Map<string, ModuleRouteSpec>()));
    const action = spec.action.toLowerCase();
    if (actions.has(action)) throw new Error(`legacy action ${spec.module}.${spec.action} is listed twice (ignoring case)`);
    actions.set(action, spec);
  }
  return modules;
})();

/**
 * A legacy action by module and action, case-insensitively: Blockscout's RPC translator
 * downcases both (apps/block_scout_web/lib/block_scout_web/controllers/api/rpc/rpc_translator.ex).
 */
export function matchLegacy(module: string, action: string): ModuleRouteSpec | { error: 'unknown-module' | 'unknown-action' } {
  const actions = LEGACY.get(module.toLowerCase());
  if (!actions) return { error: 'unknown-module' };
  return actions.get(action.toLowerCase()) ?? { error: 'unknown-action' };
}
