// The admin API's refusals are defined once (src/admin/errors.ts): every code there is raised
// somewhere in src/admin, and every AdminError raised names a code of the registry (the type
// checker holds the second; this test the first, so the registry does not fill with dead codes).
// The call table (surface.ts) and the OpenAPI document (openapi.ts) only name the codes a call may
// answer, so they do not count as raising them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN_ERRORS, AdminError } from '../../src/admin/errors.js';

const DIR = new URL('../../src/admin/', import.meta.url).pathname;
const sources = readdirSync(DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !['errors.ts', 'surface.ts', 'openapi.ts'].includes(f))
  .map((f) => readFileSync(join(DIR, f), 'utf8'))
  .join('\n');

describe('admin errors', () => {
  it.each(Object.keys(ADMIN_ERRORS))('%s is raised by the admin API', (code) => {
    expect(sources).toContain(`'${code}'`);
  });

  it('an error takes its status from the registry, unless fastify gave one for BAD_REQUEST', () => {
    expect(new AdminError('NAME_TAKEN', 'taken').status).toBe(409);
    expect(new AdminError('UNKNOWN_PLAN', 'no such plan', { plans: ['a'] })).toMatchObject({ status: 422, extra: { plans: ['a'] } });
    expect(new AdminError('BAD_REQUEST', 'too large', {}, 413).status).toBe(413);
  });
});
