// The admin API's calls, named once: their method and path under /admin/v1. The routes
// (routes/*.ts) are registered from this table and the command line (cli.ts) builds its requests
// from it, so the two cannot drift apart.

export const ADMIN_ROUTES = {
  createKey: { method: 'POST', path: '/keys' },
  listKeys: { method: 'GET', path: '/keys' },
  showKey: { method: 'GET', path: '/keys/:id' },
  updateKey: { method: 'PATCH', path: '/keys/:id' },
  addCredits: { method: 'POST', path: '/keys/:id/credits' },
  rollKey: { method: 'POST', path: '/keys/:id/roll' },
  revokeKey: { method: 'DELETE', path: '/keys/:id' },
  listAudit: { method: 'GET', path: '/audit' },
  usage: { method: 'GET', path: '/usage' },
  plans: { method: 'GET', path: '/plans' },
} as const satisfies Record<string, { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string }>;

export type AdminOperation = keyof typeof ADMIN_ROUTES;

/** The path of a call, its `:id` filled in (encoded), and its query if any. */
export function adminPath(op: AdminOperation, id?: string, query?: URLSearchParams): string {
  const path = ADMIN_ROUTES[op].path.replace(':id', () => encodeURIComponent(id ?? ''));
  const qs = query?.toString() ?? '';
  return qs === '' ? path : `${path}?${qs}`;
}

/** A call's method and url, as fastify's route() takes them. */
export function at(op: AdminOperation): { method: (typeof ADMIN_ROUTES)[AdminOperation]['method']; url: string } {
  return { method: ADMIN_ROUTES[op].method, url: ADMIN_ROUTES[op].path };
}
