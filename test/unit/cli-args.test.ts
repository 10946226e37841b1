// The command line's help and admin URL, in process (test/process/cli.test.ts runs the
// program itself): every command and subcommand has its help, found wherever --help stands, and
// the admin listener's address is taken with or without /admin/v1.
import { describe, expect, it } from 'vitest';
import { adminApiUrl, adminHelpAsked, commandHelp, summarise } from '../../src/cli-main.js';
import { configSchema } from '../../src/config/schema.js';

const KEYS_SUBCOMMANDS = ['create', 'list', 'show', 'update', 'credits', 'roll', 'revoke'];

describe('help', () => {
  it('the program, check-config and hash-key each have one; an unknown command none', () => {
    expect(commandHelp(undefined)).toMatch(/^explorer-gateway: [\s\S]*--version[\s\S]*explorer-gateway keys create/);
    expect(commandHelp('check-config')).toMatch(/^Usage:\n {2}explorer-gateway check-config FILE\n/);
    expect(commandHelp('hash-key')).toMatch(/^Usage:\n {2}explorer-gateway hash-key KEY\n/);
    expect(commandHelp('frobnicate')).toBeUndefined();
  });

  it('keys lists its subcommands; each subcommand has its own usage line and what it does', () => {
    const keys = adminHelpAsked('keys', ['--help'])!;
    for (const sub of KEYS_SUBCOMMANDS) expect(keys).toContain(`  explorer-gateway keys ${sub}`);
    for (const sub of KEYS_SUBCOMMANDS) {
      const own = adminHelpAsked('keys', [sub, '--help'])!;
      const usage = own.split('\n').filter((l) => l.startsWith('  explorer-gateway '));
      expect(usage, sub).toHaveLength(1);
      expect(usage[0]).toMatch(new RegExp(`^ {2}explorer-gateway keys ${sub}( |$)`));
      expect(own.split('\n\n')[1]!.length, `what ${sub} does`).toBeGreaterThan(20);
      expect(own).toContain('with or without /admin/v1');
    }
    expect(adminHelpAsked('usage', ['-h'])).toMatch(/^Usage:\n {2}explorer-gateway usage \[--from DATE\]/);
  });

  it('is found wherever --help or -h stands, the subcommand being the first word that is no option value', () => {
    const roll = adminHelpAsked('keys', ['roll', '--help']);
    expect(adminHelpAsked('keys', ['--admin-url', 'http://x', 'roll', '-h'])).toBe(roll);
    expect(adminHelpAsked('keys', ['--admin-url=http://x', 'roll', 'key_1', '--grace', '60', '--help'])).toBe(roll);
    expect(adminHelpAsked('keys', ['-c', 'create', 'roll', '--help'])).toBe(roll); // -c takes the next word
    expect(adminHelpAsked('keys', ['update', 'key_1', '--plan', 'list', '--help'])).toBe(adminHelpAsked('keys', ['update', '-h']));
    // An unknown subcommand, or none: the help of keys.
    expect(adminHelpAsked('keys', ['frobnicate', '--help'])).toBe(adminHelpAsked('keys', ['--help']));
    // Not asked: after --, or not at all.
    expect(adminHelpAsked('keys', ['show', '--', '--help'])).toBeUndefined();
    expect(adminHelpAsked('keys', ['list'])).toBeUndefined();
  });
});

describe('the admin URL', () => {
  it("is the admin listener's address with or without /admin/v1 and trailing slashes", () => {
    for (const given of [
      'http://127.0.0.1:9091',
      'http://127.0.0.1:9091/',
      'http://127.0.0.1:9091/admin',
      'http://127.0.0.1:9091/admin/',
      'http://127.0.0.1:9091/admin/v1',
      'http://127.0.0.1:9091/admin/v1/',
      'http://127.0.0.1:9091//',
      ' http://127.0.0.1:9091 ',
    ]) {
      expect(adminApiUrl(given, 'EGW_ADMIN_URL'), given).toBe('http://127.0.0.1:9091/admin/v1');
    }
    // Behind a proxy, under its path; IPv6; https.
    expect(adminApiUrl('https://ops.example.com/gateway/', 'x')).toBe('https://ops.example.com/gateway/admin/v1');
    expect(adminApiUrl('https://ops.example.com/gateway/admin/v1', 'x')).toBe('https://ops.example.com/gateway/admin/v1');
    expect(adminApiUrl('http://[::1]:9091', 'x')).toBe('http://[::1]:9091/admin/v1');
  });

  it('is refused, with what to write, when it is no http(s) URL', () => {
    for (const given of ['127.0.0.1:9091', 'localhost:9091', 'ftp://127.0.0.1:9091', 'http://127.0.0.1:9091/admin/v1?x=1', '']) {
      expect(() => adminApiUrl(given, '--admin-url'), given).toThrow(
        "--admin-url: expected the admin listener's address, such as http://127.0.0.1:9091 (with or without /admin/v1)",
      );
    }
  });
});

describe('check-config (summarise)', () => {
  it('names the records store as it is chosen: PostgreSQL when storage.url is set, even beside redis, without its password (issue 42, item 9)', () => {
    const base = {
      chains: { '1': { name: 'E', upstreams: ['http://127.0.0.1:1'] } },
      plans: { free: { rps: 1, credits: 1, period: 'daily' } },
    };
    const pg = configSchema.parse({
      ...base,
      redis: { url: 'redis://127.0.0.1:6379' },
      storage: { url: 'postgres://egw:s3cret@db.internal:5432/gateway' },
    });
    const text = summarise(pg, 'g.yaml');
    expect(text).toContain('run-time keys, usage, audit: PostgreSQL (db.internal:5432/gateway)');
    expect(text).not.toContain('s3cret');
    expect(summarise(configSchema.parse({ ...base, redis: { url: 'redis://127.0.0.1:6379' } }), 'g.yaml')).toContain(
      'run-time keys, usage, audit: redis',
    );
    expect(summarise(configSchema.parse(base), 'g.yaml')).toMatch(/run-time keys, usage, audit: .*\(SQLite\)/);
  });
});
