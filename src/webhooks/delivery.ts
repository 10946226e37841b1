// Sends what the outbox holds (store/outbox.ts): every process claims due deliveries once a second
// (and at once after it stored some), POSTs each to its webhook signed (auth/webhook-signature.ts),
// and records the outcome. A 2xx answer delivers it; anything else (another status, a refused
// connection, no answer within ATTEMPT_TIMEOUT_MS) tries it again after RETRY_DELAYS_MS, until
// RETRY_FOR_MS after the event: then it has failed. A claim is a lease: a process that dies while
// sending leaves the delivery to another once LEASE_MS pass, so each is delivered at least once;
// the receiver tells a repeat by `webhook-id`. None of this is on a request's path: a receiver
// that is down costs this loop's sockets and timers, never a client's request.
//
// A receiver is not trusted (issue 42, items 1 and 8): the whole attempt (connecting, the answer's
// headers and its body) ends within ATTEMPT_TIMEOUT_MS, at most READ_BYTES of an answer are read
// (the connection is closed past them: an endless or trickling body costs a bounded buffer and
// time, never the process), and unless `security.allowPrivateWebhooks` it is connected only to an
// address that is not loopback, private or link-local (destination.ts).
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import { secretKey, signatureHeaders } from '../auth/webhook-signature.js';
import { ThrottledWarning } from '../observability/throttled-log.js';
import type { Delivery, OutboxStore, Settlement } from '../store/outbox.js';
import { addressRefusal, DestinationRefused } from '../auth/webhook-destination.js';
import { guardedConnector } from './destination.js';
import type { WebhookRegistry } from './registry.js';

/** Back-off after the 1st, 2nd, ... failed attempt (the last one repeats), in the spirit of Svix's schedule. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000];
/** Retried for this long after the event, then failed. */
export const RETRY_FOR_MS = 24 * 3_600_000;
/** An attempt (connection, answer and body) must end within this. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A claim holds a delivery this long: longer than an attempt. */
export const LEASE_MS = 30_000;
/** How often due deliveries are looked for. */
export const POLL_MS = 1_000;
/** Deliveries claimed at once. */
const BATCH = 20;
/** Attempts on their way at once, at most: what a process gives receivers that do not answer. */
export const MAX_IN_FLIGHT = 100;
/** How much of a receiver's refusal is kept (and shown to write admin tokens only: admin/webhooks.ts). */
export const ERROR_CHARS = 200;
/** Most bytes of an answer read; past them the connection is closed. */
export const READ_BYTES = 8 * 1024;

/**
 * The first READ_BYTES of a body at most, then the stream destroyed (undici then closes the
 * connection: an answer not read to its end cannot be reused). A body that fails or is aborted
 * midway rejects, as the whole attempt does.
 */
export async function readPrefix(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= READ_BYTES) break;
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, READ_BYTES);
}

export interface DeliveryOptions {
  /** `security.allowPrivateWebhooks` as the current configuration says (a reload may change it). */
  allowPrivate?: () => boolean;
}

export function retryDelay(attempts: number): number {
  return RETRY_DELAYS_MS[Math.min(attempts, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS[0]!;
}

export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  /** The claims of the round under way. */
  private claiming: Promise<void> | undefined;
  private again = false;
  /** Attempts on their way, of every round. */
  private inFlight = 0;
  private readonly sending = new Set<Promise<unknown>>();
  /** Aborts the attempts on their way when the process stops: they are tried again (a claim's lease, or their settlement). */
  private readonly stopping = new AbortController();
  private closed = false;
  private readonly warning: ThrottledWarning;

  constructor(
    private readonly outbox: OutboxStore,
    private readonly registry: WebhookRegistry,
    private readonly now: () => number,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
    options: DeliveryOptions = {},
  ) {
    this.warning = new ThrottledWarning(log, 'webhook deliveries could not be claimed or settled; trying again', now);
    this.allowPrivate = options.allowPrivate ?? (() => false);
  }

  private readonly allowPrivate: () => boolean;
  /** Connects only to addresses a webhook may be sent to (destination.ts). */
  private readonly guarded = new Agent({
    connect: guardedConnector(),
    headersTimeout: ATTEMPT_TIMEOUT_MS,
    bodyTimeout: ATTEMPT_TIMEOUT_MS,
  });
  /** Connects anywhere: `security.allowPrivateWebhooks: true`. */
  private readonly open = new Agent({ headersTimeout: ATTEMPT_TIMEOUT_MS, bodyTimeout: ATTEMPT_TIMEOUT_MS });

  start(): void {
    this.timer = setInterval(() => void this.round(), POLL_MS);
    this.timer.unref();
  }

  /** Looks for due deliveries now (after events were stored). */
  kick(): void {
    void this.round();
  }

  /**
   * One round: claims due deliveries and starts sending them, until none is due or
   * MAX_IN_FLIGHT are on their way. The claims of one round run after the other's (a round asked
   * for meanwhile runs after it), but the sending does not hold up the next round: a receiver
   * that takes its 10 seconds keeps its own attempts waiting, not everyone's. Resolves, once the
   * attempts this round started have ended, with how many it started.
   */
  async round(): Promise<number> {
    if (this.closed) return 0;
    if (this.claiming) {
      this.again = true;
      return this.claiming.then(() => 0);
    }
    const started: Promise<void>[] = [];
    const claim = async () => {
      do {
        this.again = false;
        try {
          while (this.inFlight < MAX_IN_FLIGHT && !this.closed) {
            const limit = Math.min(BATCH, MAX_IN_FLIGHT - this.inFlight);
            const claimed = await this.outbox.claim(this.now(), LEASE_MS, limit);
            for (const d of claimed) {
              this.inFlight++;
              started.push(this.attempt(d).finally(() => this.inFlight--));
            }
            if (claimed.length < limit) break;
          }
        } catch (err) {
          this.warning.warn(err);
        }
      } while (this.again && !this.closed);
    };
    this.claiming = claim().finally(() => (this.claiming = undefined));
    await this.claiming;
    const sent = Promise.all(started);
    this.sending.add(sent);
    try {
      await sent;
    } finally {
      this.sending.delete(sent);
    }
    return started.length;
  }

  private async attempt(d: Delivery): Promise<void> {
    const outcome = await this.post(d);
    try {
      await this.outbox.settle(d.id, d.attempts, outcome);
    } catch (err) {
      // Unsettled, the delivery is claimed again when its lease ends: sent again, never lost.
      this.warning.warn(err, { delivery: d.id });
    }
  }

  private async post(d: Delivery): Promise<Settlement> {
    const hook = await this.registry.get(d.webhook).catch(() => null);
    if (hook === null) return this.failedAttempt(d, 0, 'the webhook could not be read');
    if (hook === undefined) return { status: 'failed', at: this.now(), lastStatus: 0, lastError: 'the webhook was deleted' };
    if (!hook.enabled) return { status: 'failed', at: this.now(), lastStatus: 0, lastError: 'the webhook is disabled' };
    const key = secretKey(hook.secret);
    if (typeof key === 'string') return { status: 'failed', at: this.now(), lastStatus: 0, lastError: `the webhook's secret: ${key}` };
    const headers = signatureHeaders(key, d.eventId, Math.floor(this.now() / 1000), d.body);
    const allowPrivate = this.allowPrivate();
    // An address literal is refused before any connection (net.connect looks no literal up); a
    // name once resolved, `localhost` too (the agent's lookup): what is checked is what it is now.
    const target = URL.canParse(hook.url) ? new URL(hook.url) : undefined;
    const host = target?.hostname ?? '';
    const literal = allowPrivate ? undefined : addressRefusal(host);
    if (literal !== undefined) return this.failedAttempt(d, 0, new DestinationRefused(`${host} is ${literal}`).message);
    const signal = AbortSignal.any([AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), this.stopping.signal]);
    /** The receiver's status, once its headers came: a body that then fails is still told with it. */
    let status = 0;
    try {
      // undici's request does not follow redirects (a 3xx is a failed attempt, as `redirect: manual` was).
      const res = await request(target === undefined ? hook.url : withoutCredentials(target), {
        method: 'POST',
        headers: { ...headers, ...basicAuth(target), 'content-type': 'application/json', 'user-agent': 'explorer-gateway-webhooks' },
        body: d.body,
        signal,
        dispatcher: allowPrivate ? this.open : this.guarded,
      });
      status = res.statusCode;
      if (status >= 200 && status < 300) {
        // Delivered: what follows is not read (nor waited for), and the connection is closed.
        res.body.on('error', () => undefined).destroy();
        return { status: 'delivered', at: this.now(), lastStatus: status, lastError: '' };
      }
      // Read under the same signal: a body that trickles ends with the attempt's time.
      const prefix = await readPrefix(res.body);
      const text = new TextDecoder().decode(prefix).slice(0, ERROR_CHARS);
      return this.failedAttempt(d, res.statusCode, `HTTP ${res.statusCode}${text ? `: ${text}` : ''}`);
    } catch (err) {
      const why = attemptError(err, signal);
      return this.failedAttempt(d, status, status === 0 ? why : `HTTP ${status}, then ${why}`);
    }
  }

  /** Tried again after the back-off, or failed for good past RETRY_FOR_MS. */
  private failedAttempt(d: Delivery, status: number, error: string): Settlement {
    const at = this.now();
    const next = at + retryDelay(d.attempts);
    if (next > d.createdAt + RETRY_FOR_MS) {
      this.log.warn({ delivery: d.id, webhook: d.webhook, attempts: d.attempts, error }, 'webhook delivery failed for good');
      return { status: 'failed', at, lastStatus: status, lastError: error };
    }
    return { status: 'pending', at, nextAttemptAt: next, lastStatus: status, lastError: error };
  }

  /**
   * No more rounds. The attempts on their way are aborted (a receiver that does not answer does
   * not hold up a stop) and settled as failed attempts, to be tried again; resolves when they are.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopping.abort(new Error('the gateway is stopping'));
    await this.claiming;
    await Promise.all(this.sending);
    await Promise.all([this.guarded.destroy(), this.open.destroy()]).catch(() => undefined);
  }
}

/** `user:password@` of a webhook's URL as `Authorization: Basic` (RFC 7617), as a browser sends it. */
function basicAuth(url: URL | undefined): Record<string, string> {
  if (url === undefined || (url.username === '' && url.password === '')) return {};
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` };
}

function withoutCredentials(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const u = new URL(url.href);
  u.username = '';
  u.password = '';
  return u.href;
}

/** Why an attempt got no (whole) answer, as kept in `lastError`. */
function attemptError(err: unknown, signal: AbortSignal): string {
  const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
  if (e instanceof DestinationRefused || e.code === 'EGW_DESTINATION_REFUSED') return e.message;
  if (e.name === 'TimeoutError' || (signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError')) {
    return `no whole answer within ${ATTEMPT_TIMEOUT_MS} ms`;
  }
  return e.cause?.code ?? e.cause?.message ?? e.code ?? e.message;
}
