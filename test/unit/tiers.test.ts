// The suite's tiers (test/support/tiers.ts, vitest.config.ts) against the files: every test file is
// in a folder of exactly one tier, and a file imports nothing that starts more than its tier may.
// What a file starts is read from its imports (TypeScript's own reading: ts.preProcessFile).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { TIER_FOLDERS, type Tier } from '../support/tiers.js';

const TEST = new URL('../', import.meta.url).pathname;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [relative(TEST, path)] : [];
  });
}

const imports = (file: string) =>
  ts.preProcessFile(readFileSync(join(TEST, file), 'utf8'), true, true).importedFiles.map((f) => f.fileName);

/** Imports that start child processes: the process tier's, and the e2e tier's. */
const CHILD_PROCESSES = [
  /^(node:)?child_process$/,
  /\/support\/process\.js$/,
  /\/support\/redis-cluster\.js$/,
  /\/support\/outbox-child\.js$/,
];
/** Imports that reach Redis or PostgreSQL, or stand a gateway up on them. */
const STORES = [/^ioredis$/, /^pg$/, /\/support\/(redis|postgres|store-worlds|gateway|global-redis)\.js$/];

/** What each tier's files may not import. */
const FORBIDDEN: Record<Tier, RegExp[]> = {
  unit: [...CHILD_PROCESSES, ...STORES],
  integration: CHILD_PROCESSES,
  process: [],
  e2e: [],
};

const tierOf = (file: string): Tier[] =>
  (Object.keys(TIER_FOLDERS) as Tier[]).filter((tier) => TIER_FOLDERS[tier].some((folder) => file.startsWith(`${folder}/`)));

const FILES = testFiles(TEST);

describe('the tiers of the suite', () => {
  it('are found', () => {
    expect(FILES.length).toBeGreaterThan(100);
  });

  it('hold every test file, each in one tier', () => {
    expect(FILES.filter((f) => tierOf(f).length !== 1)).toEqual([]);
  });

  // The unit tier runs its files one after another in a worker without isolation
  // (vitest.config.ts): a file must leave no state for the next.
  it('unit files leave nothing behind: no mocks, fake timers, stubs or environment changes', () => {
    const LEAKS =
      /\bvi\.(mock|doMock|useFakeTimers|stubEnv|stubGlobal|spyOn)\b|process\.env\.\w+\s*=[^=]|process\.env\[[^\]]+\]\s*=[^=]|delete process\.env/;
    const leaking = FILES.filter((f) => tierOf(f)[0] === 'unit' && LEAKS.test(readFileSync(join(TEST, f), 'utf8')));
    expect(leaking).toEqual([]);
  });

  it('each file imports nothing that starts more than its tier may', () => {
    const wrong = FILES.flatMap((file) => {
      const tier = tierOf(file)[0]!;
      return imports(file)
        .filter((name) => FORBIDDEN[tier].some((re) => re.test(name)))
        .map((name) => `${file} (${tier}) imports ${name}`);
    });
    expect(wrong).toEqual([]);
  });
});
