// No Docker engine runs on these machines, so this test replays the Dockerfile's own steps
// (FROM/WORKDIR/COPY/RUN/ENV, then ENTRYPOINT and HEALTHCHECK) in a clean directory: each stage
// is a folder standing for the image's root. It proves the build runs, the runtime holds
// production dependencies only, and the image's command starts and passes its health check.
import { execSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort } from '../support/gateway.js';

const ROOT = new URL('../..', import.meta.url).pathname;

interface Stage {
  name: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
  user?: string;
  entrypoint?: string[];
  healthcheck?: string[];
}

function instructions(text: string): [string, string][] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const space = l.indexOf(' ');
      return [l.slice(0, space).toUpperCase(), l.slice(space + 1).trim()];
    });
}

function replay(dir: string): Stage[] {
  const stages: Stage[] = [];
  let stage: Stage | undefined;
  const inImage = (s: Stage, p: string) => join(s.root, isAbsolute(p) ? p : join(s.workdir, p));
  for (const [op, arg] of instructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))) {
    if (op === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(arg)?.[1] ?? `stage${stages.length}`;
      stage = { name, root: join(dir, name), workdir: '/', env: {} };
      mkdirSync(stage.root, { recursive: true });
      stages.push(stage);
      continue;
    }
    if (!stage) throw new Error(`${op} before FROM`);
    const s = stage;
    switch (op) {
      case 'WORKDIR':
        s.workdir = arg;
        mkdirSync(inImage(s, '.'), { recursive: true });
        break;
      case 'ENV': {
        const [k, ...v] = arg.split('=');
        s.env[k!] = v.join('=');
        break;
      }
      case 'COPY': {
        const parts = arg.split(/\s+/);
        const fromName = parts[0]?.startsWith('--from=') ? parts.shift()!.slice('--from='.length) : undefined;
        const from = fromName === undefined ? undefined : stages.find((x) => x.name === fromName);
        if (fromName !== undefined && !from) throw new Error(`COPY --from=${fromName}: no such stage`);
        const dest = parts.pop()!;
        for (const src of parts) {
          const source = from ? inImage(from, src) : join(ROOT, src);
          const target = dest.endsWith('/') ? join(inImage(s, dest), src.split('/').pop()!) : inImage(s, dest);
          cpSync(source, target, { recursive: true });
        }
        break;
      }
      case 'RUN':
        execSync(arg, { cwd: inImage(s, '.'), stdio: 'pipe', env: { ...process.env, ...s.env } });
        break;
      case 'USER':
        s.user = arg;
        break;
      case 'ENTRYPOINT':
        s.entrypoint = JSON.parse(arg) as string[];
        break;
      case 'HEALTHCHECK':
        s.healthcheck = JSON.parse(arg.slice(arg.indexOf('CMD') + 3).trim()) as string[];
        break;
      case 'EXPOSE':
        break;
      default:
        throw new Error(`the replay does not know ${op}: teach it, or keep the Dockerfile to these instructions`);
    }
  }
  return stages;
}

const dir = mkdtempSync(join(tmpdir(), 'egw-image-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Dockerfile', () => {
  it('builds, keeps production dependencies only, runs as non-root, starts and passes its health check', async () => {
    const stages = replay(dir);
    const image = stages.at(-1)!;
    const app = join(image.root, image.workdir);

    expect(image.user).toBe('node');
    expect(existsSync(join(app, 'dist/cli.js'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/fastify'))).toBe(true);
    for (const dev of ['vitest', 'typescript', 'eslint', 'tsx']) expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
    expect(existsSync(join(app, 'src'))).toBe(false);

    // The image's environment, with its absolute paths inside the stage folder.
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(image.env)) env[k] = v.startsWith('/') ? join(image.root, v) : v;
    const port = await closedPort();
    const runEnv = { ...process.env, ...env, GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1' };

    const [cmd, ...args] = image.entrypoint!;
    expect(execSync([cmd, ...args, 'check-config', env.GATEWAY_CONFIG!].join(' '), { cwd: app, env: runEnv }).toString()).toContain('OK');
    const child = spawn(cmd!, args, { cwd: app, env: runEnv, stdio: 'ignore' });
    try {
      const [hc, ...hcArgs] = image.healthcheck!;
      let healthy = false;
      for (let i = 0; i < 50 && !healthy; i++) {
        await new Promise((r) => setTimeout(r, 100));
        healthy = await new Promise<boolean>((resolve) => {
          const probe = spawn(hc!, hcArgs, { env: runEnv, stdio: 'ignore' });
          probe.on('exit', (code) => resolve(code === 0));
        });
      }
      expect(healthy).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await new Promise((r) => child.on('exit', r))).toBe(0);
  }, 240_000);
});
