// Dependencies point inwards (docs/architecture.md, Code map): each folder of src/ imports only the folders
// its entry in ALLOWED names, those entries have no circle, and neither have the files. Every
// `import ... from`, `export ... from` and `import('...')` of every .ts file under src/ counts,
// types too (TypeScript's own reading of a file's imports: ts.preProcessFile).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src/', import.meta.url).pathname;
/** The files directly under src/: the command line (cli.ts, cli-main.ts). */
const TOP = '.';

/**
 * Which other folders of src/ each folder may import (its own files it always may), from the
 * inside out. A folder added to src/ needs an entry; an import that points outwards is fixed in
 * the code (a type or constant moved to the folder that owns it, a value passed in), not here.
 */
const ALLOWED: Record<string, readonly string[]> = {
  // Inner: pure logic and the clients it is built on, no fastify, nothing of the pipeline.
  http: [],
  rpc: [],
  redis: [],
  auth: ['http'],
  upstream: ['http'],
  cache: ['http', 'redis', 'upstream'],
  observability: ['cache', 'http', 'upstream'],
  routes: ['cache', 'http', 'rpc'],
  // Search across a cluster's chains: merging and paging, the chains asked through a function.
  multichain: ['http'],
  // Chain heads, finality depths, what an answer is about: pure but for the head poll.
  finality: ['cache', 'rpc', 'upstream'],
  // Checks route names and chain ids against routes/, so above it; the folders below read only
  // the parts of the configuration they need, in types of their own.
  config: ['auth', 'routes'],
  // What outlives a process (keys, audit, usage rows, ledgers): nothing but its own files and Redis.
  store: ['redis'],
  usage: ['observability', 'store'],
  quota: ['config', 'observability', 'redis', 'store'],
  keys: ['auth', 'config', 'store'],
  // Which answers cost credits, and the one settlement of a decision's credits.
  billing: ['keys', 'quota'],
  // The pipeline, in the contract's order.
  // Events to webhooks, and their delivery: beside the pipeline, which tells it of decisions.
  webhooks: ['auth', 'config', 'keys', 'observability', 'quota', 'store'],
  request: [
    'auth',
    'billing',
    'cache',
    'config',
    'finality',
    'http',
    'keys',
    'multichain',
    'observability',
    'quota',
    'routes',
    'rpc',
    'upstream',
    'usage',
    'webhooks',
  ],
  // The admin API, on its own listener.
  admin: ['auth', 'config', 'http', 'keys', 'quota', 'request', 'store', 'webhooks'],
  // Composition: what lives as long as the process, state, the listeners.
  app: [
    'admin',
    'auth',
    'cache',
    'config',
    'finality',
    'http',
    'keys',
    'observability',
    'process',
    'quota',
    'redis',
    'request',
    'routes',
    'store',
    'upstream',
    'usage',
    'webhooks',
  ],
  // The cluster's primary process; its log lines go through observability/log-destination.ts.
  process: ['observability'],
  [TOP]: ['admin', 'app', 'auth', 'config', 'process', 'redis', 'upstream'],
};

/** The folders that may import fastify and @fastify/*: the pipeline, the admin API, the composition. */
const FRAMEWORK = new Set(['request', 'admin', 'app']);

const files = (dir: string): string[] =>
  readdirSync(join(SRC, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

const FILES = files('.');
const folderOf = (file: string): string => (file.includes(sep) ? file.split(sep)[0]! : TOP);

interface Import {
  file: string;
  specifier: string;
  /** The src/ file a relative import names (as .ts), or undefined for a package. */
  target: string | undefined;
}

const IMPORTS: Import[] = FILES.flatMap((file) =>
  ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true).importedFiles.map(({ fileName: specifier }) => ({
    file,
    specifier,
    target: specifier.startsWith('.') ? normalize(join(dirname(file), specifier)).replace(/\.js$/, '.ts') : undefined,
  })),
);

/** Every import of `folder`'s files that its entry does not allow, as `file -> specifier`. */
function violations(folder: string): string[] {
  const allowed = new Set([folder, ...(ALLOWED[folder] ?? [])]);
  return IMPORTS.filter(({ file }) => folderOf(file) === folder)
    .filter(({ specifier, target }) => {
      if (target === undefined) return !FRAMEWORK.has(folder) && /^(fastify|@fastify\/)/.test(specifier);
      if (target.startsWith('..')) return true; // outside src/
      return !allowed.has(folderOf(target));
    })
    .map(({ file, specifier }) => `${file} -> ${specifier}`);
}

/** A circle in `graph`, as the nodes along it (first one repeated at the end), or undefined. */
function findCircle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    const at = path.indexOf(node);
    if (at >= 0) return [...path.slice(at), node];
    if (done.has(node)) return undefined;
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const circle = visit(next);
      if (circle) return circle;
    }
    path.pop();
    done.add(node);
    return undefined;
  };
  for (const node of graph.keys()) {
    const circle = visit(node);
    if (circle) return circle;
  }
  return undefined;
}

describe('layout', () => {
  it('every folder under src/ has an entry, and every entry is a folder under src/', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(Object.keys(ALLOWED).sort()).toEqual([...folders, TOP].sort());
    for (const [folder, list] of Object.entries(ALLOWED)) {
      for (const other of list) expect(Object.keys(ALLOWED), `${folder} -> ${other}`).toContain(other);
    }
  });

  it('the allowed imports have no circle between folders', () => {
    expect(findCircle(new Map(Object.entries(ALLOWED)))?.join(' -> ')).toBeUndefined();
  });

  const named = (folder: string) => (folder === TOP ? 'src/*.ts' : `src/${folder}/`);
  it.each(Object.keys(ALLOWED).map((folder) => [named(folder), folder]))(
    '%s imports only the folders its entry names, and fastify only if it may',
    (_, folder) => {
      expect(violations(folder)).toEqual([]);
    },
  );

  it('no circle between files, in one folder or across', () => {
    const graph = new Map<string, string[]>(FILES.map((f) => [f, []]));
    for (const { file, target } of IMPORTS) if (target !== undefined) graph.get(file)!.push(target);
    expect(findCircle(graph)?.join(' -> ')).toBeUndefined();
  });
});
