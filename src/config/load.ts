// Reads a configuration file: environment substitution, YAML parsing, validation against the
// one zod schema, and error messages that name the file, the line and the key path.
import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument, isNode } from 'yaml';
import type { ZodError } from 'zod';
import { configSchema, type Config } from './schema.js';
import { substituteEnv } from './env.js';
import { configuredDigest } from '../auth/digest.js';

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file}: invalid configuration, ${problems.length} problem(s):\n${problems.join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** `plans.free.rps`, `keys[0].plan`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const part of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[part];
  }
  return v;
}

function describeIssues(file: string, error: ZodError, raw: unknown, lineOf: (path: PropertyKey[]) => number | undefined): string[] {
  const out: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        out.push(`${at(file, lineOf(path))}${formatPath(path)}: unknown key`);
      }
      continue;
    }
    if (issue.code === 'invalid_key') {
      // A map key that is not a valid chain id or plan name: say what is wrong with the key.
      const detail = issue.issues[0]?.message ?? issue.message;
      out.push(`${at(file, lineOf(issue.path))}${formatPath(issue.path)}: invalid name: ${detail}`);
      continue;
    }
    const path = issue.path;
    const missing = path.length > 0 && valueAt(raw, path) === undefined && issue.code === 'invalid_type';
    const message = missing ? `required (${issue.message})` : issue.message;
    out.push(`${at(file, lineOf(path))}${formatPath(path)}: ${message}`);
  }
  return out;
}

function at(file: string, line: number | undefined): string {
  return line === undefined ? `${file}: ` : `${file}:${line}: `;
}

/** Parses and validates configuration text; `file` is only used in messages. */
export function parseConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): Config {
  const { text: substituted, missing } = substituteEnv(text, env);
  const problems = missing.map(
    (m) => `${at(file, m.line)}environment variable ${m.name} is not set (write \${${m.name}:-default} for a fallback)`,
  );

  const lineCounter = new LineCounter();
  const doc = parseDocument(substituted, { lineCounter, prettyErrors: false, uniqueKeys: true });
  for (const e of doc.errors) {
    const pos = lineCounter.linePos(e.pos[0]);
    problems.push(`${at(file, pos.line)}YAML: ${e.message.split('\n')[0] ?? e.message}`);
  }
  if (doc.errors.length > 0) throw new ConfigError(file, problems);

  const raw: unknown = doc.toJS();
  const lineOf = (path: PropertyKey[]): number | undefined => {
    // Walk up to the nearest node that exists, so a missing key points at its parent.
    for (let n = path.length; n >= 0; n--) {
      const node: unknown = doc.getIn(path.slice(0, n) as unknown[], true);
      if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
    }
    return undefined;
  };

  const result = configSchema.safeParse(raw ?? {});
  if (!result.success) problems.push(...describeIssues(file, result.error, raw, lineOf));
  if (problems.length > 0 || !result.success) throw new ConfigError(file, problems);

  // One key listed twice (in clear or as a digest) would make its plan ambiguous.
  const seen = new Map<string, string>();
  result.data.keys.forEach((k, i) => {
    const digest = configuredDigest(k);
    const other = seen.get(digest);
    if (other !== undefined) {
      problems.push(`${at(file, lineOf(['keys', i]))}keys[${i}]: the same key as "${other}"`);
    }
    seen.set(digest, k.name);
  });
  if (problems.length > 0) throw new ConfigError(file, problems);
  return result.data;
}

export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [`${file}: cannot read the file: ${(err as Error).message}`]);
  }
  return parseConfig(text, file, env);
}
