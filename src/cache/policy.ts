// What is cached, under which key, and for how long. Pure: no clock of its own, no I/O.
import { isPassableResponseHeader, NO_TOKENS, PER_ANSWER_HEADERS } from '../http/headers.js';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { UpstreamAnswer } from '../upstream/client.js';
import type { ConfirmationMarks } from './confirmations.js';

export type CacheOutcome = 'HIT' | 'MISS' | 'STALE';

/** An answer as the cache keeps it. Times are unix ms. */
export interface CacheEntry {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  /**
   * `headers`, the body's length and PER_ANSWER_HEADERS (empty values) as flat [name, value,
   * ...] pairs for writeHead: worked out once per entry, not once per answer, which fills in
   * the last values. Not stored in the shared tier.
   */
  headerLines: string[];
  /**
   * headerLines with one request's CORS lines inserted before the per-answer headers, and those
   * CORS lines (compared by identity): made by request/send.ts for the last CORS lines an answer
   * had, so that headerLines stays as it is. Not stored in the shared tier.
   */
  corsLines: string[] | undefined;
  corsFor: readonly string[] | undefined;
  storedAt: number;
  /** Fresh (HIT) before this. */
  freshUntil: number;
  /** May be served STALE (while refreshing, or while the upstream fails) before this. */
  staleUntil: number;
  /** About data below its chain's finality line: kept for cache.finalTtlSeconds, not the route's TTL. */
  final: boolean;
  /** Where the body's `confirmations` sit, rewritten from the chain's head on every answer. */
  confirmations: ConfirmationMarks | undefined;
  /** Shows the chain's tip (Lifetime.tip): past freshUntil it is served only while the upstream fails. */
  tip: boolean;
  /**
   * `body` holds the answer deflated (raw DEFLATE, RFC 1951): a final entry in the in-process
   * tier once it is half full (response-cache.ts). Read it with entryBody(); headerLines keep the
   * answer's own Content-Length.
   */
  deflated: boolean;
}

/** The answer's bytes, inflated when the entry keeps them deflated. */
export function entryBody(entry: CacheEntry): Buffer {
  return entry.deflated ? inflateRawSync(entry.body) : entry.body;
}

/** Bodies smaller than this are kept as they are: deflate gains little on them. */
export const PACK_MIN_BYTES = 1024;

/**
 * The entry with its body deflated, when that saves at least a quarter of it; else the entry.
 * Level 1: the answers are JSON, where the fastest level already gains most (bench/compression.ts).
 */
export function packed(entry: CacheEntry): CacheEntry {
  if (entry.deflated || entry.body.length < PACK_MIN_BYTES) return entry;
  const body = deflateRawSync(entry.body, { level: 1 });
  return body.length <= entry.body.length * 0.75 ? { ...entry, body, deflated: true, corsLines: undefined, corsFor: undefined } : entry;
}

/**
 * What an answer's arrival decides about its entry (finality/lifetime.ts): whether it is final
 * (kept `ttlSeconds`, not its route's TTL), where its confirmations sit, and whether it shows the
 * chain's tip.
 */
export interface Lifetime {
  final: boolean;
  /** How long a final answer is kept (cache.finalTtlSeconds); a moving one keeps its route's TTL. */
  ttlSeconds: number;
  confirmations: ConfirmationMarks | undefined;
  /** The answer is the tip itself (eth_blockNumber, the newest blocks): never served stale while a refresh runs, only when the upstream fails. */
  tip: boolean;
}

export type LifetimeOf = (answer: UpstreamAnswer, nowMs: number) => Lifetime | undefined;

/** Fixed per-entry overhead counted against cache.maxBytes: key, headers, object and LRU node. */
export const ENTRY_OVERHEAD_BYTES = 512;

/** A JSON-RPC call as its cache key reads it: the method and its canonical parameters (rpc/methods.ts CheckedCall). */
export interface KeyedCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

/**
 * The key of a cache entry, built here and nowhere else. One entry serves every API key
 * (explorer data is public): the key is the chain, then what was asked.
 * - An upstream path with its canonical query (the client's key is never part of it) and
 *   show-scam-tokens, which changes token results.
 * - A JSON-RPC call: `rpc`, its method and its canonical parameters, one entry for the JSON-RPC
 *   form and Etherscan's proxy form. An upstream path starts with `/`, so the two never meet.
 */
export function cacheKey(chainId: string, upstreamPath: string, showScamTokens: string | undefined): string;
export function cacheKey(chainId: string, call: KeyedCall): string;
export function cacheKey(chainId: string, asked: string | KeyedCall, showScamTokens?: string): string {
  // The value is keyed exactly as it is forwarded: instances treat only "true" as true.
  if (typeof asked === 'string') return `${chainId} ${asked} ${showScamTokens ?? ''}`;
  return `${chainId} rpc ${asked.method} ${canonicalJson(asked.params)}`;
}

/** Object keys sorted at every depth: one text per meaning, for cache keys. */
export function canonicalJson(value: unknown): string {
  // Most calls' parameters hold no object (addresses, tags, hashes): JSON.stringify as it is
  // gives the same text, without a replacer called for every value (bench/results/2026-11-26-json-rpc.md).
  if (Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object')) return JSON.stringify(value);
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

function hasNoStore(headers: UpstreamAnswer['headers']): boolean {
  const cc = headers['cache-control'];
  if (cc === undefined) return false;
  return /(?:^|,)\s*no-store\s*(?:,|$)/i.test(Array.isArray(cc) ? cc.join(',') : cc);
}

/** Only 200 answers are kept, and never one the upstream marked no-store (RFC 9111 5.2.2.5). */
export function isStorable(answer: UpstreamAnswer, ttlSeconds: number): boolean {
  return ttlSeconds > 0 && answer.status === 200 && !hasNoStore(answer.headers);
}

export function toEntry(answer: UpstreamAnswer, nowMs: number, ttlSeconds: number, staleSeconds: number, life?: Lifetime): CacheEntry {
  const freshUntil = nowMs + (life?.final ? life.ttlSeconds : ttlSeconds) * 1000;
  return {
    status: answer.status,
    headers: answer.headers,
    body: answer.body,
    headerLines: headerLines(answer.headers, answer.body.length),
    corsLines: undefined,
    corsFor: undefined,
    storedAt: nowMs,
    freshUntil,
    staleUntil: freshUntil + staleSeconds * 1000,
    final: life?.final ?? false,
    confirmations: life?.confirmations,
    tip: life?.tip ?? false,
    deflated: false,
  };
}

/**
 * An entry's header fields (a field with several values repeated), its Content-Length, then
 * the per-answer headers with empty values, as flat pairs.
 */
export function headerLines(headers: CacheEntry['headers'], bodyLength: number): string[] {
  const lines: string[] = [];
  for (const name in headers) {
    // The same rule as for an upstream's answer, again for entries from the shared tier that
    // an older gateway stored with fields this one sets itself.
    if (!isPassableResponseHeader(name, NO_TOKENS)) continue;
    const value = headers[name];
    if (typeof value === 'string') lines.push(name, value);
    else if (value) for (const one of value) lines.push(name, one);
  }
  lines.push('content-length', String(bodyLength));
  for (const name of PER_ANSWER_HEADERS) lines.push(name, '');
  return lines;
}

export function entrySize(key: string, entry: CacheEntry): number {
  return entry.body.length + key.length + ENTRY_OVERHEAD_BYTES;
}

/** Age in whole seconds (RFC 9111 5.1). */
export function ageSeconds(entry: CacheEntry, nowMs: number): number {
  return Math.max(0, Math.floor((nowMs - entry.storedAt) / 1000));
}
