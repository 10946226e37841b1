// Dependencies point inwards (README, Development): the logic of the gateway knows nothing of
// the HTTP framework, so it can be tested and reused without it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src/', import.meta.url).pathname;
const INNER = ['auth', 'routes', 'quota', 'cache', 'upstream', 'config', 'observability', 'redis', 'rpc'];

const files = (dir: string): string[] =>
  readdirSync(join(SRC, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

describe('layout', () => {
  it.each(INNER)('src/%s imports nothing from fastify, nor from the composition or the pipeline', (dir) => {
    for (const file of files(dir)) {
      const text = readFileSync(join(SRC, file), 'utf8');
      expect(text, file).not.toMatch(/from '(fastify|@fastify\/[^']+)'/);
      expect(text, file).not.toMatch(/from '\.\.\/(app|request)\//);
    }
  });
});
