// The `security` section (config/schema.ts): its defaults and what it refuses, as test/unit/config.test.ts
// checks the other sections.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/load.js';

const MINIMAL = `
chains:
  "1": { name: Ethereum, upstreams: [http://127.0.0.1:1] }
plans:
  free: { rps: 5, credits: 100 }
`;

function problems(text: string): string[] {
  try {
    parseConfig(text, 'test.yaml', {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected the configuration to be rejected');
}

describe('security.badKeys', () => {
  it('defaults to 20 wrong keys in 60 s, then a 300 s block, counters for 10,000 addresses', () => {
    expect(parseConfig(MINIMAL, 'test.yaml', {}).security).toEqual({
      badKeys: { failures: 20, windowSeconds: 60, blockSeconds: 300, maxAddresses: 10_000 },
    });
    // An empty section gets the same.
    expect(parseConfig(`${MINIMAL}security: {}\n`, 't', {}).security.badKeys.failures).toBe(20);
    expect(parseConfig(`${MINIMAL}security: { badKeys: {} }\n`, 't', {}).security.badKeys.blockSeconds).toBe(300);
  });

  it('takes each setting, and failures: 0 (off)', () => {
    const c = parseConfig(
      `${MINIMAL}security: { badKeys: { failures: 5, windowSeconds: 30, blockSeconds: 3600, maxAddresses: 1000 } }\n`,
      't',
      {},
    );
    expect(c.security.badKeys).toEqual({ failures: 5, windowSeconds: 30, blockSeconds: 3600, maxAddresses: 1000 });
    expect(parseConfig(`${MINIMAL}security: { badKeys: { failures: 0 } }\n`, 't', {}).security.badKeys.failures).toBe(0);
  });

  it.each([
    ['failures: -1', 'security.badKeys.failures', 'expected an integer 0-100 (0: off)'],
    ['failures: 2.5', 'security.badKeys.failures', 'expected an integer 0-100 (0: off)'],
    ['failures: 101', 'security.badKeys.failures', 'expected an integer 0-100 (0: off)'],
    ['failures: "20"', 'security.badKeys.failures', 'expected an integer 0-100 (0: off)'],
    ['windowSeconds: 0', 'security.badKeys.windowSeconds', 'expected a positive integer'],
    ['windowSeconds: 86401', 'security.badKeys.windowSeconds', 'expected at most 86400 (one day)'],
    ['blockSeconds: 0', 'security.badKeys.blockSeconds', 'expected a positive integer'],
    ['blockSeconds: 100000', 'security.badKeys.blockSeconds', 'expected at most 86400 (one day)'],
    ['maxAddresses: 0', 'security.badKeys.maxAddresses', 'expected a positive integer'],
    ['maxAddresses: 2000000', 'security.badKeys.maxAddresses', 'expected at most 1000000'],
  ])('refuses %s', (setting, path, message) => {
    const found = problems(`${MINIMAL}security: { badKeys: { ${setting} } }\n`);
    expect(found.join('\n')).toContain(path);
    expect(found.join('\n')).toContain(message);
  });

  it('refuses unknown keys in the section', () => {
    expect(problems(`${MINIMAL}security: { badKeys: { failure: 5 } }\n`).join('\n')).toMatch(/security\.badKeys.*failure/);
    expect(problems(`${MINIMAL}security: { trustProxy: true }\n`).join('\n')).toMatch(/security.*trustProxy/);
  });
});
