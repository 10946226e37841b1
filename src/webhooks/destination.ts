// The delivery side of auth/webhook-destination.ts (issue 42, item 8): undici's connector for
// webhook deliveries, which resolves a name to the addresses a webhook may be sent to only and
// checks the address the socket is connected to, whatever led there.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { buildConnector } from 'undici';
import { addressRefusal, DestinationRefused } from '../auth/webhook-destination.js';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * dns.lookup, keeping only the addresses a webhook may be sent to: what net.connect is given as
 * `lookup` (https://nodejs.org/api/net.html#socketconnectoptions-connectlistener), so a name is
 * connected to one of those or not at all. net asks for every address (`all`) when it tries
 * IPv4 and IPv6 in turn (autoSelectFamily), for one otherwise.
 */
export function guardedLookup(
  hostname: string,
  options: { family?: number; hints?: number; all?: boolean },
  callback: LookupCallback,
): void {
  const all: LookupAllOptions = { family: options.family, hints: options.hints, all: true };
  dnsLookup(hostname, all, (err, addresses) => {
    if (err) return callback(err, []);
    const allowed = addresses.filter((a) => addressRefusal(a.address) === undefined);
    const first = addresses[0];
    if (allowed.length === 0 || first === undefined) {
      const why = first === undefined ? 'no address' : `${first.address}, ${addressRefusal(first.address) ?? 'an address'}`;
      return callback(new DestinationRefused(`${hostname} resolves to ${why}`), []);
    }
    if (options.all) callback(null, allowed);
    else callback(null, allowed[0]!.address, allowed[0]!.family);
  });
}

type Connector = buildConnector.connector;

/**
 * undici's connector (https://undici.nodejs.org/#/docs/api/Connector) with guardedLookup, and a
 * last check of the address the socket is connected to, whatever led there (an address literal
 * never goes through a lookup): a socket to a refused address is closed before anything is sent.
 */
export function guardedConnector(options: buildConnector.BuildOptions = {}): Connector {
  const connect = buildConnector({ ...options, lookup: guardedLookup } as buildConnector.BuildOptions);
  return (opts, callback) =>
    connect(opts, (err, socket) => {
      if (err !== null) return callback(err, null);
      const remote = socket.remoteAddress ?? '';
      const why = addressRefusal(remote);
      if (why === undefined) return callback(null, socket);
      socket.destroy();
      callback(new DestinationRefused(`${opts.hostname} is ${remote}, ${why}`), null);
    });
}
