// Where webhooks may be sent (issue 42, item 8). A webhook's URL is chosen by whoever holds a
// write admin token, and the gateway POSTs to it from inside the operator's network: pointed at
// loopback, a private range or the cloud's metadata address (169.254.169.254), it would let that
// caller reach what only the gateway can. So, unless `security.allowPrivateWebhooks` is true, such
// destinations are refused twice: on the URL, when a webhook is created, changed or configured
// (an address literal in any spelling the WHATWG URL parser accepts, and `localhost`), and on the
// address actually connected to, at every delivery, so that a name that resolves (or is made to
// resolve later: DNS rebinding) to such an address is refused too (webhooks/destination.ts).
// Beside webhook-signature.ts: the configuration checks its webhooks with it.
import { BlockList, isIP } from 'node:net';

/** The ranges refused, in the order they are named (the first that holds an address names it). */
const RANGES: readonly { what: string; subnets: readonly [string, number, 'ipv4' | 'ipv6'][] }[] = [
  // RFC 1122 section 3.2.1.3 (0.0.0.0/8, "this network"; 0.0.0.0 reaches the local host), RFC 4291 section 2.5.2 (::).
  {
    what: 'an unspecified',
    subnets: [
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ],
  },
  // RFC 1122 section 3.2.1.3 (127/8), RFC 4291 section 2.5.3 (::1).
  {
    what: 'a loopback',
    subnets: [
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ],
  },
  // RFC 1918, and RFC 4193 (unique local IPv6, fc00::/7).
  {
    what: 'a private',
    subnets: [
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
    ],
  },
  // RFC 3927 (169.254/16, the cloud metadata address among them), RFC 4291 section 2.5.6 (fe80::/10).
  {
    what: 'a link-local',
    subnets: [
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ],
  },
  // RFC 6598: the carrier-grade NAT's shared space, inside a provider's network.
  { what: 'a shared (carrier-grade NAT)', subnets: [['100.64.0.0', 10, 'ipv4']] },
  // RFC 5771, RFC 1112 section 4 (240/4 and the broadcast address), RFC 4291 section 2.7; and the
  // deprecated IPv4-compatible IPv6 addresses (RFC 4291 section 2.5.5.1), which embed an IPv4 one.
  {
    what: 'a multicast or reserved',
    subnets: [
      ['224.0.0.0', 4, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
      ['::', 96, 'ipv6'],
    ],
  },
];

/** One BlockList per kind (node:net, https://nodejs.org/api/net.html#class-netblocklist), to name why. */
const LISTS = RANGES.map(({ what, subnets }) => {
  const list = new BlockList();
  for (const [network, prefix, family] of subnets) list.addSubnet(network, prefix, family);
  return { what, list };
});

/**
 * Why a webhook may not be sent to this IP address (`a loopback address`), or undefined. An
 * IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is checked as its IPv4 address: BlockList
 * matches it against the IPv4 subnets.
 */
export function addressRefusal(address: string): string | undefined {
  let a = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // A zone (`fe80::1%eth0`) says which interface, not which address.
  const zone = a.indexOf('%');
  if (zone !== -1) a = a.slice(0, zone);
  const family = isIP(a);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { what, list } of LISTS) if (list.check(a, type)) return `${what} address`;
  return undefined;
}

/**
 * Why a webhook may not be sent to this URL's host, as far as the URL tells (an address literal,
 * or `localhost`, RFC 6761 section 6.3), or undefined: a name is checked once it is resolved,
 * at delivery. The WHATWG URL parser has already turned every IPv4 spelling (`2130706433`,
 * `0x7f.1`, `0177.0.0.1`, `127.1`) into dotted decimal and IPv6 into its short form.
 */
export function hostRefusal(hostname: string): string | undefined {
  const literal = addressRefusal(hostname);
  if (literal !== undefined) return `${hostname} is ${literal}`;
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return `${hostname} is a loopback name`;
  return undefined;
}

export const ALLOW_SETTING = 'security.allowPrivateWebhooks';

/** The refusal of a webhook URL (what the admin API and check-config say), or undefined. */
export function urlRefusal(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const why = hostRefusal(new URL(url).hostname);
  if (why === undefined) return undefined;
  return `${why}: webhooks are not sent to loopback, private or link-local destinations unless ${ALLOW_SETTING} is true`;
}

/** A delivery refused for where it would have gone: a failed attempt, with this message as its reason. */
export class DestinationRefused extends Error {
  readonly code = 'EGW_DESTINATION_REFUSED';
  constructor(message: string) {
    super(`${message}: refused (${ALLOW_SETTING} is false)`);
    this.name = 'DestinationRefused';
  }
}
