// No Docker engine runs on these machines, so this test replays the Dockerfile's own steps
// (FROM/WORKDIR/COPY/RUN/ENV, then ENTRYPOINT and HEALTHCHECK) in a clean directory: each stage
// is a folder standing for the image's root. It proves the build runs, the runtime holds
// production dependencies only, and the image's command starts and passes its health check.
// `RUN apt-get ... install PKG...` is not run on this machine: the replay checks that the
// packages' commands are here instead (this machine builds better-sqlite3 from source with them,
// as the image's build stage must when no prebuilt binary can be fetched).
//
// The build stage's `npm ci` (minutes: it builds better-sqlite3 from source) is not run again when
// the checkout's node_modules is that very install: the same `npm ci`, from the same
// package.json and package-lock.json, on this machine, with this toolchain (.ci/run's first step
// on a clean checkout). The replay then checks what is left of the line: node_modules holds
// exactly the lock's packages (npm's own record of the install, node_modules/.package-lock.json,
// against package-lock.json), the addon was built, and the folder the line names in
// npm_config_nodedir holds this Node's headers (node-gyp's `--nodedir`); and copies node_modules
// into the stage. When node_modules is not the lock's install (a package added by hand), or with
// EGW_REPLAY_NPM_CI=1, the line runs as written.
import { execSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
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
  /** Debian packages the stage installs (`apt-get install`). */
  packages: string[];
  /** EXPOSE'd ports. */
  expose: number[];
}

/** The command each Debian package a stage may install brings, looked for on this machine. */
const PACKAGE_COMMANDS: Record<string, string> = { python3: 'python3', make: 'make', 'g++': 'g++' };

/** The packages of `apt-get [options] install [options] PKG...` in a RUN line (up to its `&&`). */
function aptPackages(run: string): string[] {
  const packages: string[] = [];
  for (const command of run.split('&&').map((c) => c.trim().split(/\s+/))) {
    const install = command.indexOf('install');
    if (command[0] !== 'apt-get' || install < 0) continue;
    packages.push(...command.slice(install + 1).filter((w) => !w.startsWith('-')));
  }
  return packages;
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

/**
 * Why the checkout's node_modules is not the install `npm ci` makes from package-lock.json, or
 * undefined when it is: every package npm recorded as installed is the lock's (version and
 * integrity), and every package of the lock is installed but the optional ones npm leaves out on
 * this platform.
 */
function notTheLocksInstall(): string | undefined {
  type Entry = { version?: string; integrity?: string; optional?: boolean };
  const read = (file: string) => (JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { packages: Record<string, Entry> }).packages;
  if (!existsSync(join(ROOT, 'node_modules/.package-lock.json'))) return 'no node_modules/.package-lock.json';
  const lock = read('package-lock.json');
  const installed = read('node_modules/.package-lock.json');
  for (const [name, entry] of Object.entries(installed)) {
    const want = lock[name];
    if (!want || want.version !== entry.version || want.integrity !== entry.integrity) return `${name} is not the lock's`;
  }
  for (const [name, entry] of Object.entries(lock)) {
    if (name !== '' && !installed[name] && !entry.optional) return `${name} of the lock is not installed`;
  }
  return undefined;
}

const whyNotReused = process.env.EGW_REPLAY_NPM_CI === '1' ? 'EGW_REPLAY_NPM_CI=1' : notTheLocksInstall();
const fullNpmCi = whyNotReused !== undefined;

/**
 * The `npm ci` line, from the checkout's own `npm ci`: the addon built, npm_config_nodedir's
 * folder holding the headers of this Node, and node_modules copied into the stage.
 */
function installedAsTheLineWould(line: string, cwd: string, env: Record<string, string>): void {
  const nodedir = /npm_config_nodedir="\$\((.*)\)"/.exec(line)?.[1];
  if (nodedir === undefined) throw new Error(`the replay reads npm_config_nodedir="$(...)" in the npm ci line: teach it (${line})`);
  const dir = execSync(nodedir, { cwd, encoding: 'utf8', env: { ...process.env, ...env } }).trim();
  // node-gyp reads an installed Node's headers from <nodedir>/include/node (common.gypi, node.h).
  expect(existsSync(join(dir, 'include/node/common.gypi')), `${dir}/include/node/common.gypi`).toBe(true);
  const version = readFileSync(join(dir, 'include/node/node_version.h'), 'utf8');
  const [major, minor, patch] = process.versions.node.split('.');
  for (const [name, value] of [
    ['MAJOR', major],
    ['MINOR', minor],
    ['PATCH', patch],
  ]) {
    expect(version, `${dir}/include/node/node_version.h names Node ${process.versions.node}`).toMatch(
      new RegExp(`#define NODE_${name}_VERSION ${value}\\b`),
    );
  }
  expect(existsSync(join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))).toBe(true);
  // A copy, not links: `npm prune` in the next stage removes and rewrites files of node_modules
  // (the folder itself resolved first, in case it is a link to another checkout's).
  copy(realpathSync(join(ROOT, 'node_modules')), join(cwd, 'node_modules'));
}

/**
 * COPY of a file or a folder to the path it becomes, with `cp -a` (the folder's contents into
 * the target folder, as COPY does): fs.cpSync took tens of seconds for node_modules.
 */
function copy(source: string, target: string): void {
  if (statSync(source).isDirectory()) {
    mkdirSync(target, { recursive: true });
    execSync(`cp -a '${source}/.' '${target}'`);
  } else {
    mkdirSync(dirname(target), { recursive: true });
    execSync(`cp -a '${source}' '${target}'`);
  }
}

function replay(dir: string): Stage[] {
  const stages: Stage[] = [];
  let stage: Stage | undefined;
  const inImage = (s: Stage, p: string) => join(s.root, isAbsolute(p) ? p : join(s.workdir, p));
  for (const [op, arg] of instructions(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))) {
    if (op === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(arg)?.[1] ?? `stage${stages.length}`;
      stage = { name, root: join(dir, name), workdir: '/', env: {}, packages: [], expose: [] };
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
          copy(source, target);
        }
        break;
      }
      case 'RUN':
        if (/^apt-get\b/.test(arg)) {
          for (const pkg of aptPackages(arg)) {
            const command = PACKAGE_COMMANDS[pkg];
            if (command === undefined) throw new Error(`the replay does not know what package ${pkg} brings: teach PACKAGE_COMMANDS`);
            execSync(`command -v ${command}`, { stdio: 'pipe' }); // throws when this machine lacks it
            s.packages.push(pkg);
          }
          break;
        }
        if (/\bnpm ci\b/.test(arg) && !fullNpmCi) {
          installedAsTheLineWould(arg, inImage(s, '.'), s.env);
          break;
        }
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
        s.expose.push(...arg.split(/\s+/).map((p) => Number(p.split('/')[0])));
        break;
      default:
        throw new Error(`the replay does not know ${op}: teach it, or keep the Dockerfile to these instructions`);
    }
  }
  return stages;
}

const dir = mkdtempSync(join(tmpdir(), 'egw-image-'));
// rm -rf, not fs.rmSync: the stages hold three copies of node_modules, and fs.rmSync took two
// minutes to remove them on a loaded machine (bench/results/2026-12-02-test-tiers.md).
afterAll(() => void execSync(`rm -rf '${dir}'`), 120_000);

describe('Dockerfile', () => {
  it('builds, keeps production dependencies only, runs as non-root, starts and passes its health check', async () => {
    if (fullNpmCi) console.log(`the Dockerfile replay runs npm ci as written: ${whyNotReused}`);
    const stages = replay(dir);
    const image = stages.at(-1)!;
    const app = join(image.root, image.workdir);

    expect(image.user).toBe('node');
    // The toolchain node-gyp needs to build better-sqlite3 when no prebuilt binary can be fetched.
    expect(stages[0]!.packages).toEqual(expect.arrayContaining(['python3', 'make', 'g++']));
    expect(existsSync(join(app, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'))).toBe(true);
    expect(existsSync(join(app, 'dist/cli.js'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/fastify'))).toBe(true);
    for (const dev of ['vitest', 'typescript', 'eslint', 'tsx']) expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
    expect(existsSync(join(app, 'src'))).toBe(false);

    // The image's environment, with its absolute paths inside the stage folder.
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(image.env)) env[k] = v.startsWith('/') ? join(image.root, v) : v;
    // The image's own config and environment: the public and operations listeners reachable from
    // the container's network and EXPOSE'd, the admin listener on loopback and not EXPOSE'd.
    const imageConfig = parseConfig(readFileSync(env.GATEWAY_CONFIG!, 'utf8'), 'image config', {
      ...image.env,
      ADMIN_TOKEN: 'x'.repeat(24),
    });
    expect(imageConfig.server.host).toBe('0.0.0.0');
    expect(imageConfig.metrics.host).toBe('0.0.0.0');
    expect(image.expose).toEqual(expect.arrayContaining([imageConfig.server.port, imageConfig.metrics.port!]));
    expect(imageConfig.admin.host).toBe('127.0.0.1');
    expect(image.expose).not.toContain(imageConfig.admin.port);

    const port = await closedPort();
    const metricsPort = await closedPort();
    const runEnv = { ...process.env, ...env, GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1', METRICS_PORT: String(metricsPort) };

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
      // The operations listener of the image's config answers /metrics (METRICS_HOST 0.0.0.0 from the image).
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('egw_requests_total');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await new Promise((r) => child.on('exit', r))).toBe(0);
  }, 600_000); // with npm ci as written, it builds better-sqlite3 from source here: about 80 s on an idle machine, minutes on a busy one
});
