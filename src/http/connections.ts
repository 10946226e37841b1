// A cap on the public listener's connections, so that a flood of idle or slow connections can
// never take the file descriptors the gateway needs to answer everyone else. When the cap is
// reached, the connections that have not sent a complete request yet (oldest first) are closed
// to make room, not the newcomer: a connection that sends nothing costs the flood nothing, and
// a real client sends its request at once. nginx likewise closes idle keep-alive connections
// when worker_connections run out (https://nginx.org/en/docs/ngx_core_module.html#worker_connections).
// Only when every connection has sent a request is the newcomer closed. And a connection that
// Node cannot make a request of gets the gateway's own error body (answerClientError).
//
// The cap's default comes from the process's real open-file limit (/proc/self/limits: Node
// raises the soft limit to the hard one at start), less what the gateway itself needs: the
// upstream pools' sockets, Redis, the store, the other listeners.
//
// And the end of the connections at shutdown (drainable): no client is left without an answer
// to a request it sent.
import { readFileSync } from 'node:fs';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ERRORS, messageBody, type ErrorCode, type ErrorSpec } from './errors.js';

export interface ConnectionStats {
  open: number;
  max: number;
  /** Connections closed at the cap: `pending` had sent no complete request, `refused` was the newcomer. */
  shed: { pending: number; refused: number };
}

/** File descriptors kept for everything but client connections, besides the upstream sockets. */
export const FIXED_RESERVE = 64;
/** Without a readable limit (not Linux), the cap assumes this one. */
export const ASSUMED_FILE_LIMIT = 16_384;

/** The soft open-file limit of this process, or undefined when it cannot be read. */
export function openFileLimit(limits = readLimits()): number | undefined {
  const m = limits && /^Max open files\s+(\d+|unlimited)\s/m.exec(limits);
  if (!m) return undefined;
  return m[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(m[1]);
}

function readLimits(): string | undefined {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The default cap: the file limit less `reserved` descriptors (the upstream sockets the gateway
 * may open) and FIXED_RESERVE, never less than a quarter of the limit.
 */
export function defaultMaxConnections(fileLimit: number | undefined, reserved: number): number {
  const limit = Math.min(fileLimit ?? ASSUMED_FILE_LIMIT, 1_000_000);
  return Math.max(Math.floor(limit / 4), limit - reserved - FIXED_RESERVE);
}

const kRequested = Symbol('requested');
type Tracked = Socket & { [kRequested]?: true };

/**
 * Keeps `server` at or under `max` connections. `onShed` is told of every connection closed at
 * the cap (the caller logs, throttled, and counts).
 */
export function capConnections(server: Server, max: number, onShed: (reason: 'pending' | 'refused') => void): () => ConnectionStats {
  let open = 0;
  const shed = { pending: 0, refused: 0 };
  // Connections that have not sent a complete request, oldest first (a Set keeps insertion order).
  const pending = new Set<Tracked>();
  server.on('connection', (socket: Tracked) => {
    open++;
    pending.add(socket);
    socket.once('close', () => {
      open--;
      pending.delete(socket);
    });
    if (open <= max) return;
    const oldest = pending.values().next().value;
    if (oldest !== undefined && oldest !== socket) {
      pending.delete(oldest);
      shed.pending++;
      oldest.destroy();
      onShed('pending');
    } else {
      shed.refused++;
      socket.destroy();
      onShed('refused');
    }
  });
  // A complete request head has arrived: the connection is a client's, not to be shed.
  server.on('request', (req: { socket: Tracked }) => {
    const socket = req.socket;
    if (socket[kRequested] === undefined) {
      socket[kRequested] = true;
      pending.delete(socket);
    }
  });
  return () => ({ open, max, shed: { ...shed } });
}

/** A listener's shutdown, in the order the CLI takes it (src/cli-main.ts). */
export interface Drain {
  /**
   * No new connection; every answer not yet begun says `Connection: close`; resolves once no
   * connection is left.
   */
  begin(): Promise<void>;
  /** Requests whose answer has not been written in full. */
  inFlight(): number;
}

const kAnswer = Symbol('answer');
type Answering = Socket & { [kAnswer]?: ServerResponse };

/**
 * The graceful end of `server`'s connections. From begin(): the server takes no new connection,
 * and every answer whose head is not written yet says `Connection: close` (Node then closes the
 * connection once the answer is written), those of the requests in flight too. A keep-alive
 * connection that is idle is not closed under its client: its next request is answered (the
 * pipeline's 503 while the gateway drains) with `Connection: close`, or it ends at its keep-alive
 * timeout, the deadline its client was told (`Keep-Alive: timeout=N`). Closing it any earlier
 * races a request the client may be sending at that moment, which then meets a closed socket or
 * a reset: the race http.Server#closeIdleConnections() leaves to the caller
 * (https://nodejs.org/api/http.html#servercloseidleconnections), and http.Server#close() does
 * the same since Node 19 (https://nodejs.org/api/http.html#serverclosecallback), so the listener
 * is closed as a plain net.Server here.
 */
export function drainable(server: Server): Drain {
  const sockets = new Set<Answering>();
  server.on('connection', (socket: Answering) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // The socket's current answer (a property, no listener per request; an idle connection keeps
  // its last one until its next request or its close, at most server.keepAliveTimeoutMs).
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    (req.socket as Answering)[kAnswer] = res;
  });
  const sayClose = (_req: IncomingMessage, res: ServerResponse) => res.setHeader('connection', 'close');
  return {
    begin() {
      // Before fastify's own listener: a cache hit is written before the listeners after it run.
      server.prependListener('request', sayClose);
      for (const socket of sockets) {
        const res = socket[kAnswer];
        if (res !== undefined && !res.headersSent) res.setHeader('connection', 'close');
      }
      return new Promise((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    },
    inFlight() {
      let n = 0;
      for (const socket of sockets) if (socket[kAnswer]?.writableFinished === false) n++;
      return n;
    },
  };
}

const CLIENT_ERRORS: Record<string, ErrorCode> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
};

/**
 * What a connection gets when Node cannot make a request of what it sent (a malformed request,
 * headers too large, or not complete in time): the gateway's own status and body, then the
 * connection is closed. Replaces fastify's default, whose body is its own
 * (https://nodejs.org/api/http.html#event-clienterror).
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const code = CLIENT_ERRORS[err.code ?? ''] ?? 'BAD_REQUEST';
  endWithError(socket, code, messageBody(ERRORS[code].message));
}

/**
 * Writes the gateway's answer for `code` (its status, its headers, `body`) on a socket no request
 * object stands for, and closes it: a client error, or a CONNECT (app/server.ts).
 */
export function endWithError(socket: Duplex, code: ErrorCode, body: string, headers: Readonly<Record<string, string>> = {}): void {
  const { status, headers: own = {} }: ErrorSpec = ERRORS[code];
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  for (const [name, value] of Object.entries({ ...own, ...headers, connection: 'close' })) head += `${name}: ${value}\r\n`;
  socket.end(`${head}\r\n${body}`);
}

/** How long a connection closed with part of its request unread stays half-open (closeUnread). */
export const UNREAD_GRACE_MS = 2_000;

/**
 * For an answer sent with `Connection: close` before the request body was read whole: Node ends
 * such a connection with socket.destroySoon() (end, then destroy once the answer is written), and
 * a socket closed with unread data is reset (RFC 9293 section 3.6.1, RFC 1122 4.2.2.13): a client
 * still writing its body then gets EPIPE or ECONNRESET, and may never read the answer. So the
 * answer is followed by a FIN only; nothing more is read (the request stream is paused, so the
 * client's bytes wait in the kernel's buffers, never the process's), and the socket is destroyed
 * after `graceMs` or when the client closes first: nginx's lingering close, without the reading
 * (https://nginx.org/en/docs/http/ngx_http_core_module.html#lingering_close). Node calls
 * socket.end() itself when a socket has no destroySoon (lib/_http_server.js, resOnFinish).
 */
export function closeUnread(socket: Socket, graceMs = UNREAD_GRACE_MS): void {
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    const timer = setTimeout(() => socket.destroy(), graceMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
