// The command line as an operator types it (through tsx, so no build is needed). Each run loads
// the program, seconds on a busy machine: the tests that run it several times have time for it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../support/admin.js';
import { useFixtureExplorer } from '../support/explorer.js';
import { closedPort } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/process.js';

const ROOT = new URL('../..', import.meta.url).pathname;
/** The CLI with `args`; `input` is its stdin (none: /dev/null), `env` added to the environment. */
const run = (args: string[], options: { input?: string; env?: Record<string, string> } = {}) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    input: options.input ?? '',
    env: { ...process.env, DEMO_API_KEY: '', GATEWAY_CONFIG: '', EGW_ADMIN_URL: '', EGW_ADMIN_TOKEN: '', ...options.env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const cli = (...args: string[]) => run(args);
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

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

  it('--version prints the version of package.json', () => {
    expect(cli('--version')).toEqual({ code: 0, out: `${VERSION}\n`, err: '' });
  });

  // Each command's and subcommand's text: test/unit/cli-args.test.ts.
  it('--help or -h of the program, of a command and of a subcommand: its usage on stdout, exit 0', () => {
    const top = cli('--help');
    expect(top).toMatchObject({ code: 0, err: '' });
    for (const line of ['--config FILE', 'check-config FILE', 'hash-key [KEY]', '--version', 'keys create', 'usage [--from DATE]']) {
      expect(top.out).toContain(line);
    }
    for (const [args, usage] of [
      [['check-config', '-h'], 'explorer-gateway check-config FILE'],
      [['hash-key', '--help'], 'explorer-gateway hash-key KEY'],
      [['keys', '--help'], 'explorer-gateway keys revoke ID'],
      [['keys', 'create', '--help'], 'explorer-gateway keys create --name NAME'],
      [['usage', '-h'], 'explorer-gateway usage [--from DATE]'],
    ] as const) {
      const r = cli(...args);
      expect(r, args.join(' ')).toMatchObject({ code: 0, err: '' });
      expect(r.out, args.join(' ')).toMatch(/^Usage:\n/);
      expect(r.out, args.join(' ')).toContain(usage);
    }
    expect(cli('frobnicate', '--help')).toMatchObject({ code: 2, out: '' });
  }, 120_000);

  it('hash-key reads the key from stdin when none is given: one line, its newline not part of it', () => {
    const digest = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n'; // hash-key abc
    expect(run(['hash-key'], { input: 'abc\n' })).toEqual({ code: 0, out: digest, err: '' });
    expect(run(['hash-key'], { input: 'abc' })).toEqual({ code: 0, out: digest, err: '' });
    // Nothing, or two lines: refused, with what to do.
    const empty = run(['hash-key'], { input: '' });
    expect(empty).toMatchObject({ code: 2, out: '' });
    expect(empty.err).toMatch(/^hash-key: no key on stdin: pass KEY, or/);
    expect(run(['hash-key'], { input: 'abc\ndef\n' })).toMatchObject({
      code: 2,
      out: '',
      err: 'hash-key: stdin holds more than one line; a key is one line\n',
    });
  }, 90_000);
});

describe('the admin commands', () => {
  const fixture = useFixtureExplorer();
  let gw: GatewayProcess;
  let listener: string;
  beforeAll(async () => {
    const port = await closedPort();
    listener = `http://127.0.0.1:${port}`;
    gw = await startGatewayProcess(
      {
        chains: { '1': { name: 'Ethereum', upstreams: [fixture().url] } },
        plans: { small: { rps: 100, credits: 1_000 } },
        keys: [{ name: 'from-file', key: 'cli-test-file-key', plan: 'small' }],
        admin: { token: ADMIN_TOKEN, host: '127.0.0.1', port },
        log: { level: 'warn', requests: false },
      },
      60_000,
    );
  }, 90_000);
  afterAll(async () => {
    expect(await gw.stop()).toBe(0);
  });

  // Every form of the URL (proxies' paths, IPv6, what is refused): test/unit/cli-args.test.ts.
  it("take the admin listener's address with or without /admin/v1, in EGW_ADMIN_URL and --admin-url", () => {
    const token = { EGW_ADMIN_TOKEN: ADMIN_TOKEN };
    const expected = run(['keys', 'list'], { env: { ...token, EGW_ADMIN_URL: `${listener}/admin/v1` } });
    expect(expected).toMatchObject({ code: 0, err: '' });
    expect((JSON.parse(expected.out) as { items: { name: string }[] }).items.map((k) => k.name)).toContain('from-file');
    expect(run(['keys', 'list'], { env: { ...token, EGW_ADMIN_URL: listener } })).toEqual(expected);
    expect(run(['keys', 'list', '--admin-url', `${listener}/`], { env: token })).toEqual(expected);
    expect(run(['keys', 'list', `--admin-url=${listener}/admin/v1/`], { env: token })).toEqual(expected);
    // Without the scheme: refused, saying what to write.
    const bare = run(['keys', 'list'], { env: { ...token, EGW_ADMIN_URL: listener.replace('http://', '') } });
    expect(bare).toMatchObject({ code: 2, out: '' });
    expect(bare.err).toContain(
      "EGW_ADMIN_URL: expected the admin listener's address, such as http://127.0.0.1:9091 (with or without /admin/v1)",
    );
  }, 90_000);
});
