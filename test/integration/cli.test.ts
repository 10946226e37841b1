// The command line as an operator types it (through tsx, so no build is needed).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const cli = (...args: string[]) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, DEMO_API_KEY: '', GATEWAY_CONFIG: '' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('explorer-gateway', () => {
  it('hash-key prints the sha256 digest for keys[].sha256', () => {
    expect(cli('hash-key', 'abc')).toMatchObject({ code: 0, out: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n' });
  });

  it('check-config summarises a good file: chains, plans, keys by name', () => {
    const r = cli('check-config', 'config/gateway.yaml');
    expect(r.code).toBe(0);
    expect(r.out).toContain('config/gateway.yaml: OK');
    expect(r.out).toMatch(/chains \(6\):[\s\S]*42161 {2}Arbitrum One/);
    expect(r.out).toContain('demo  plan free, active');
    expect(r.out).not.toContain('demo-key-change-me');
  });

  it('check-config exits 1 and lists every problem with file, line and key path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'egw-cli-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'chains:\n  "1": { name: E, upstreams: [ftp://x] }\nplans:\n  free: { rps: 0, credits: 1 }\nbogus: 1\n');
    const r = cli('check-config', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${file}:2: chains.1.upstreams[0]: expected an http(s) URL`);
    expect(r.err).toContain(`${file}:4: plans.free.rps: expected a positive integer`);
    expect(r.err).toContain(`${file}:5: bogus: unknown key`);
  });

  it('refuses to start without a configuration, and on an unknown command', () => {
    expect(cli().code).toBe(2);
    expect(cli('frobnicate').code).toBe(2);
  });
});
