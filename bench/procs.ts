// Child processes: CPU pinning, commands with a time bound, and a registry of live children so
// an interrupted bench ends exactly the processes it started (by pid), and nothing else.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** The load generator runs on this core ... */
export const LOAD_CORE = 0;
/** ... and the server under test on this one, so neither steals the other's CPU. */
export const SERVER_CORE = 1;

/** Pinning needs taskset and at least the two cores named above; otherwise everything floats. */
export const canPin: boolean = availableParallelism() > SERVER_CORE && spawnSync('taskset', ['--version']).status === 0;

/** The command line that runs `cmd args` on `core` (taskset execs, so the pid stays the child's). */
export function pinned(core: number, cmd: string, args: readonly string[]): [string, string[]] {
  return canPin ? ['taskset', ['-c', String(core), cmd, ...args]] : [cmd, [...args]];
}

const live = new Set<ChildProcess>();

/** Starts a child and remembers it until it exits. */
export function start(cmd: string, args: readonly string[], stdio: 'pipe' | 'inherit-stderr'): ChildProcess {
  const child = spawn(cmd, args, { stdio: stdio === 'pipe' ? 'pipe' : ['ignore', 'pipe', 'inherit'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** SIGTERM to each child this process started and that is still running (used on Ctrl-C). */
export function stopAllStarted(): void {
  for (const child of live) child.kill('SIGTERM');
}

export interface CommandOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion, killing it (SIGKILL, by pid) if it outlives `timeoutMs`. */
export function runBounded(cmd: string, args: readonly string[], timeoutMs: number): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    const child = start(cmd, args, 'pipe');
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Waits for a child to exit; SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
