// One JSON line per finished request (`log.requests`), like nginx's access log: method, path
// without its query (the query may carry `apikey`), status, chain, route, the key's name (never
// the key), cache outcome, upstream and timings.
//
// The line is built here, in pino's own layout (level, time, pid, hostname, the fields, msg:
// https://getpino.io/#/docs/api?id=logger), and written to the logger's destination as it is:
// pino's general path (merging an object, serializers, hooks) cost a hit about 6 µs a line, a
// fifth of a whole cache hit; this costs about one (bench/results/2026-11-23-access-log.md).
// The destination buffers and writes in batches (app/resources.ts).
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { AccessLog } from '../request/finish.js';

/** Needs JSON escaping: a quote, a backslash, a control character or anything past ASCII. */
function needsEscape(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) return true;
  }
  return false;
}
/** A JSON string; most values (ids, paths, names) need no escaping, and skip JSON.stringify. */
const quote = (s: string): string => (needsEscape(s) ? JSON.stringify(s) : `"${s}"`);

export function accessLog(log: Pick<Logger, 'isLevelEnabled'>, write: (line: string) => void): AccessLog {
  // pino's level number for info, and the bindings it adds to every line.
  const bindings = `,"pid":${process.pid},"hostname":${quote(hostname())}`;
  return (ctx, method, url) => {
    if (!log.isLevelEnabled('info')) return;
    const q = url.indexOf('?');
    let line = `{"level":30,"time":${Date.now()}${bindings},"reqId":${quote(ctx.id)},"method":${quote(method)},"path":${quote(
      q === -1 ? url : url.slice(0, q),
    )},"status":${ctx.status}`;
    // Absent facts are left out, as JSON.stringify (and so pino) leaves out undefined.
    if (ctx.chainId !== undefined) line += `,"chain":${quote(ctx.chainId)}`;
    if (ctx.route !== undefined) line += `,"route":${quote(ctx.route)}`;
    if (ctx.key !== undefined) line += `,"key":${quote(ctx.key.name)}`;
    if (ctx.cache !== undefined) line += `,"cache":${quote(ctx.cache)}`;
    if (ctx.upstream !== undefined) line += `,"upstream":${quote(ctx.upstream)}`;
    if (ctx.upstreamMs !== undefined) line += `,"upstreamMs":${ctx.upstreamMs}`;
    write(`${line},"ms":${Math.round((performance.now() - ctx.startedAt) * 1000) / 1000},"msg":"request"}\n`);
  };
}
