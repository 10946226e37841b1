// The route names an operator writes (costs, cache TTLs, a key's `routes`), for the folders that
// may not read the route table itself (test/unit/layout.test.ts): each name with the path it
// stands for, after `/{chain_id}/api/v2/`. Three v2 routes have older, shorter names (their
// path's last segment: routes/table.ts); a pattern matches either.
import { ROUTE_NAMES, routeByName } from '../routes/table.js';

export { ROUTE_NAMES };

/** Every route name, and for a v2 route the path it stands for when that differs from its name. */
export const ROUTE_PATHS: ReadonlyMap<string, string> = new Map(
  ROUTE_NAMES.map((name) => {
    const spec = routeByName(name);
    return [name, spec?.kind === 'v2' ? spec.template.replace(/^\/api\/v2\//, '') : name];
  }),
);
