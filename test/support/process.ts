// Runs the real CLI in a child process (through tsx, so no build is needed), for tests that
// need several gateway processes on one Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { closedPort } from './gateway.js';

const ROOT = new URL('../..', import.meta.url).pathname;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

export interface GatewayProcess {
  url: string;
  port: number;
  /** The configuration file the process reads (rewrite it and send SIGHUP to reload). */
  file: string;
  /** Writes a new configuration to `file` (the server section is kept). */
  writeConfig(config: Record<string, unknown>): void;
  child: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `src/cli.ts` on `config` in a child process; `wrap` is a command the node process runs
 * under (`['prlimit', '--nofile=1024:1024', '--']`).
 */
export async function startGatewayProcess(
  config: Record<string, unknown>,
  // A bound for a start that hangs, not for a slow one: a gateway through tsx listened after
  // 7.5 s on this 2-core machine at a load of 9, and missed a 15 s bound at 13 to 18
  // (bench/results/2026-12-02-test-tiers.md); the test's own timeout (60 s) bounds the rest.
  timeoutMs = 45_000,
  wrap: string[] = [],
): Promise<GatewayProcess> {
  const port = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), 'egw-'));
  const file = join(dir, 'gateway.yaml');
  // Its own embedded store in its own directory, unless the test names one; a `redis` section
  // gets `volatile: true` unless it names `volatile` (`volatile: undefined` writes none): the
  // suites' Redis keeps nothing on disk, and a gateway refuses to start on one without it.
  const writeConfig = (c: Record<string, unknown>) =>
    writeFileSync(
      file,
      stringify({
        storage: { path: join(dir, 'gateway.db') },
        ...c,
        ...(isObject(c.redis) && !('volatile' in c.redis) ? { redis: { ...c.redis, volatile: true } } : {}),
        server: { ...(c.server as object), host: '127.0.0.1', port },
      }),
    );
  writeConfig(config);
  const command = [...wrap, process.execPath, '--import', 'tsx', join(ROOT, 'src/cli.ts'), '--config', file];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output}`);
    try {
      await fetch(`${url}/`);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`gateway did not start in ${timeoutMs} ms:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    port,
    file,
    writeConfig,
    child,
    output: () => output,
    stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
