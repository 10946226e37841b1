// A loopback TCP proxy in front of a real server, for outage tests: cut() drops every
// connection and refuses new ones (a dead Redis), hang() keeps connections open but forwards
// nothing (a stuck one), restore() brings the same port back.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  cut(): Promise<void>;
  hang(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let hanging = false;
  let server: Server;

  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const s = createServer((client) => {
        sockets.add(client);
        client.on('close', () => sockets.delete(client));
        client.on('error', () => client.destroy());
        if (hanging) return; // accept, never answer
        const upstream = connect(targetPort, targetHost);
        sockets.add(upstream);
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        client.on('close', () => pairs.delete(pair));
        client.pipe(upstream);
        upstream.pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve(s));
    });

  server = await listen(0);
  const port = (server.address() as AddressInfo).port;

  const dropAll = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      dropAll();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });

  return {
    port,
    cut: stop,
    hang() {
      // Connections stay open and new ones are accepted, but no byte moves any more.
      hanging = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    async restore() {
      if (hanging) dropAll(); // stuck connections are dropped; clients reconnect
      hanging = false;
      if (!server.listening) server = await listen(port);
    },
    close: stop,
  };
}
