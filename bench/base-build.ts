// `--base REF`: the gateway of another git revision, compiled next to this one so that one bench
// measures both, alternating (a change and what it changes, under the same drift). The revision's
// src/ and bench/ are taken with `git archive` into .bench-base/ and compiled with its own
// tsconfig, against this checkout's node_modules.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASE_ROOT } from './server-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', shell: false });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  return r.stdout.trim();
}

/** Compiles REF's bench servers into .bench-base/; returns the revision's short hash. */
export function buildBase(ref: string): string {
  const commit = run('git', ['rev-parse', '--short', `${ref}^{commit}`], ROOT);
  rmSync(BASE_ROOT, { recursive: true, force: true });
  mkdirSync(BASE_ROOT, { recursive: true });
  const archive = spawnSync('git', ['archive', '--format=tar', commit], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr.toString()}`);
  const untar = spawnSync('tar', ['-x', '-C', BASE_ROOT], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr.toString()}`);
  symlinkSync(join(ROOT, 'node_modules'), join(BASE_ROOT, 'node_modules'));
  if (!existsSync(join(BASE_ROOT, 'tsconfig.bench.json'))) throw new Error(`${commit} has no tsconfig.bench.json`);
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.bench.json'], BASE_ROOT);
  return commit;
}
