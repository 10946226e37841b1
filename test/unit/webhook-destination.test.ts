// Where webhooks may be sent (issue 42, item 8; src/auth/webhook-destination.ts): every spelling of
// loopback the WHATWG URL parser accepts, the private, link-local, unspecified and carrier-grade NAT
// ranges, IPv4-mapped IPv6 among them, are refused on the URL; public addresses and names are not
// (a name is checked once resolved, at delivery: test/integration/webhook-destinations.test.ts).
// And the connector's lookup keeps only the addresses a webhook may go to, through the real
// resolver (`localhost` resolves to loopback from /etc/hosts, no network needed).
import { describe, expect, it } from 'vitest';
import { addressRefusal, DestinationRefused, hostRefusal, urlRefusal } from '../../src/auth/webhook-destination.js';
import { guardedConnector, guardedLookup } from '../../src/webhooks/destination.js';
import { createServer, type AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';

const REFUSED: [string, RegExp][] = [
  // loopback, in every spelling
  ['http://127.0.0.1/', /loopback/],
  ['http://2130706433/', /loopback/],
  ['http://0x7f.1/', /loopback/],
  ['http://0x7f000001/', /loopback/],
  ['http://0177.0.0.1/', /loopback/],
  ['http://127.1/', /loopback/],
  ['http://127.255.255.254:8080/x', /loopback/],
  ['http://[::1]/', /loopback/],
  ['http://[0:0:0:0:0:0:0:1]/', /loopback/],
  ['http://[::ffff:127.0.0.1]/', /loopback/],
  ['http://[::ffff:7f00:1]/', /loopback/],
  ['http://localhost/', /loopback name/],
  ['http://LOCALHOST./', /loopback name/],
  ['http://api.localhost/', /loopback name/],
  // private
  ['http://10.0.0.1/', /private/],
  ['http://172.16.0.1/', /private/],
  ['http://172.31.255.255/', /private/],
  ['http://192.168.1.1/', /private/],
  ['http://[fc00::1]/', /private/],
  ['http://[fd12:3456::1]/', /private/],
  ['http://[::ffff:10.0.0.1]/', /private/],
  // link-local, the cloud metadata address among them
  ['http://169.254.169.254/latest/meta-data/', /link-local/],
  ['http://2852039166/', /link-local/],
  ['http://[fe80::1]/', /link-local/],
  ['http://[::ffff:169.254.169.254]/', /link-local/],
  // unspecified
  ['http://0.0.0.0/', /unspecified/],
  ['http://0/', /unspecified/],
  ['http://[::]/', /unspecified/],
  // carrier-grade NAT
  ['http://100.64.0.1/', /carrier-grade NAT/],
  ['http://100.127.255.255/', /carrier-grade NAT/],
];
const ALLOWED = [
  'https://hooks.example.com/egw',
  'http://93.184.215.14/',
  'http://172.32.0.1/',
  'http://100.128.0.1/',
  'http://169.255.0.1/',
  'http://11.0.0.1/',
  'http://[2606:4700::1111]/',
  'http://[::ffff:8.8.8.8]/',
  'http://localhost.example.com/',
];

describe('a webhook URL', () => {
  it.each(REFUSED)('%s is refused (%s), naming the setting', (url, why) => {
    const refused = urlRefusal(url);
    expect(refused).toMatch(why);
    expect(refused).toContain('security.allowPrivateWebhooks is true');
  });

  it.each(ALLOWED)('%s is not refused on its URL', (url) => {
    expect(urlRefusal(url)).toBeUndefined();
  });

  it('says which address a spelling is', () => {
    expect(urlRefusal('http://0x7f.1/')).toMatch(/^127\.0\.0\.1 is a loopback address: /);
    expect(hostRefusal('[::ffff:7f00:1]')).toBe('[::ffff:7f00:1] is a loopback address');
  });
});

describe('an address connected to', () => {
  it('is checked as the socket names it: IPv4, IPv6, IPv4-mapped, with a zone', () => {
    expect(addressRefusal('127.0.0.1')).toBe('a loopback address');
    expect(addressRefusal('::ffff:127.0.0.1')).toBe('a loopback address');
    expect(addressRefusal('fe80::1%eth0')).toBe('a link-local address');
    expect(addressRefusal('169.254.169.254')).toBe('a link-local address');
    expect(addressRefusal('8.8.8.8')).toBeUndefined();
    expect(addressRefusal('2001:4860:4860::8888')).toBeUndefined();
    expect(addressRefusal('not an address')).toBeUndefined();
  });
});

describe('the lookup deliveries connect through', () => {
  const lookup = (host: string, all: boolean) =>
    new Promise<{ err: Error | null; address: string | LookupAddress[] }>((resolve) =>
      guardedLookup(host, { all }, (err, address) => resolve({ err, address })),
    );

  it('refuses a name that resolves to loopback only, with the address it resolved to', async () => {
    for (const all of [true, false]) {
      const { err } = await lookup('localhost', all);
      expect(err).toBeInstanceOf(DestinationRefused);
      expect(err!.message).toMatch(
        /^localhost resolves to (127\.0\.0\.1|::1), a loopback address: refused \(security\.allowPrivateWebhooks is false\)$/,
      );
    }
  });

  it("passes the resolver's own error on", async () => {
    const { err } = await lookup('no-such-host.invalid', true);
    expect(err).not.toBeInstanceOf(DestinationRefused);
    expect((err as NodeJS.ErrnoException).code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });
});

describe('the connector deliveries connect through', () => {
  it('closes a socket whose address is refused, whatever led there (an address literal is never looked up)', async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const connect = guardedConnector();
    const got = await new Promise<Error | null>((resolve) =>
      connect({ hostname: '127.0.0.1', host: `127.0.0.1:${port}`, port: String(port), protocol: 'http:' }, (...args) => {
        args[1]?.destroy();
        resolve(args[0]);
      }),
    );
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(got).toBeInstanceOf(DestinationRefused);
    expect(got!.message).toBe('127.0.0.1 is 127.0.0.1, a loopback address: refused (security.allowPrivateWebhooks is false)');
  });
});
