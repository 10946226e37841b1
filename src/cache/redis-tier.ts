// The shared cache tier: entries also kept in Redis so that gateway processes share fills.
// A Redis failure here is a miss, never an error to the client. Bodies above a threshold are
// deflated (explorer JSON shrinks several-fold; see bench/ for the measurement).
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import type { RedisClient } from '../redis/client.js';
import { headerLines, type CacheEntry } from './policy.js';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/** Bodies at least this large are stored deflated. */
export const COMPRESS_MIN_BYTES = 1024;
const RAW = 1;
const DEFLATED = 2;

interface Meta {
  status: number;
  headers: CacheEntry['headers'];
  storedAt: number;
  freshUntil: number;
  staleUntil: number;
  final?: boolean;
  confirmations?: CacheEntry['confirmations'];
  tip?: boolean;
}

/** [format byte][u32 meta length][meta JSON][body, raw or deflated] */
export async function encodeEntry(entry: CacheEntry): Promise<Buffer> {
  const { body, headerLines: _lines, corsLines: _cors, corsFor: _for, deflated, ...meta } = entry; // the lines are worked out again on decoding
  const metaBytes = Buffer.from(JSON.stringify(meta satisfies Meta));
  let format = deflated ? DEFLATED : RAW;
  let payload = body;
  if (!deflated && body.length >= COMPRESS_MIN_BYTES) {
    const packed = await deflate(body, { level: 1 });
    if (packed.length < body.length) {
      format = DEFLATED;
      payload = packed;
    }
  }
  const head = Buffer.allocUnsafe(5);
  head.writeUInt8(format, 0);
  head.writeUInt32BE(metaBytes.length, 1);
  return Buffer.concat([head, metaBytes, payload]);
}

export async function decodeEntry(buf: Buffer): Promise<CacheEntry | undefined> {
  if (buf.length < 5) return undefined;
  const format = buf.readUInt8(0);
  const metaLength = buf.readUInt32BE(1);
  if (5 + metaLength > buf.length || (format !== RAW && format !== DEFLATED)) return undefined;
  const meta = JSON.parse(buf.subarray(5, 5 + metaLength).toString('utf8')) as Meta;
  const payload = buf.subarray(5 + metaLength);
  const body = format === DEFLATED ? await inflate(payload) : Buffer.from(payload);
  return {
    ...meta,
    body,
    headerLines: headerLines(meta.headers, body.length),
    corsLines: undefined,
    corsFor: undefined,
    // Written by an older gateway: a plain entry.
    final: meta.final === true,
    confirmations: wellFormed(meta.confirmations, body.length) ? meta.confirmations : undefined,
    tip: meta.tip === true,
    deflated: false,
  };
}

/** Marks that fit the body (an entry is shared by gateways of several versions): ascending, inside it, as many of each. */
function wellFormed(marks: Meta['confirmations'], bodyLength: number): boolean {
  if (marks === undefined) return false;
  const { at, length, block, stored } = marks;
  if (![at, length, block, stored].every((a) => Array.isArray(a) && a.length === at.length)) return false;
  let end = 0;
  for (let i = 0; i < at.length; i++) {
    if (!Number.isSafeInteger(at[i]) || at[i]! < end || !Number.isSafeInteger(length[i]) || length[i]! < 1) return false;
    end = at[i]! + length[i]!;
  }
  return end <= bodyLength && block.every(Number.isSafeInteger) && stored.every(Number.isSafeInteger);
}

export class RedisCacheTier {
  /** Failures since start (for metrics and the rate-limited log). */
  failures = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  redisKey(key: string): string {
    return `${this.prefix}cache:${createHash('sha256').update(key).digest('hex')}`;
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    try {
      const buf = await this.client.getBuffer(this.redisKey(key));
      return buf ? await decodeEntry(buf) : undefined;
    } catch (err) {
      this.failed(err);
      return undefined;
    }
  }

  /** Fire and forget: the client's answer never waits on the shared tier. */
  set(key: string, entry: CacheEntry, nowMs: number): void {
    const ttlMs = entry.staleUntil - nowMs;
    if (ttlMs <= 0) return;
    encodeEntry(entry)
      .then((buf) => this.client.set(this.redisKey(key), buf, 'PX', ttlMs))
      .catch((err: unknown) => this.failed(err));
  }

  private failed(err: unknown): void {
    this.failures++;
    this.onFailure(err);
  }
}
