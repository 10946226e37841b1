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
      allowPrivateWebhooks: false,
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

describe('security.allowPrivateWebhooks', () => {
  const hook = (url: string) => `webhooks:\n  - { url: "${url}", events: ["*"], secret: whsec_${'A'.repeat(32)} }\n`;

  it('is false unless set: a configured webhook on loopback or a private address is refused, naming the setting', () => {
    expect(parseConfig(MINIMAL, 't', {}).security.allowPrivateWebhooks).toBe(false);
    for (const url of ['http://127.0.0.1:9/hooks', 'http://2130706433/', 'http://[::1]/', 'http://10.1.2.3/', 'http://localhost:8080/']) {
      const got = problems(`${MINIMAL}${hook(url)}`);
      expect(got, url).toHaveLength(1);
      expect(got[0], url).toMatch(/^test\.yaml:7: webhooks\[0\]\.url: .*(loopback|private).*security\.allowPrivateWebhooks is true$/);
    }
  });

  it('lets them be, set to true; a public receiver needs nothing', () => {
    const c = parseConfig(`${MINIMAL}${hook('http://127.0.0.1:9/hooks')}security: { allowPrivateWebhooks: true }\n`, 't', {});
    expect(c.security.allowPrivateWebhooks).toBe(true);
    expect(c.webhooks[0]!.url).toBe('http://127.0.0.1:9/hooks');
    expect(parseConfig(`${MINIMAL}${hook('https://hooks.example.com/egw')}`, 't', {}).webhooks).toHaveLength(1);
  });

  it('takes true or false only', () => {
    expect(problems(`${MINIMAL}security: { allowPrivateWebhooks: yes please }\n`)).toEqual([
      'test.yaml:6: security.allowPrivateWebhooks: expected true or false',
    ]);
  });
});
