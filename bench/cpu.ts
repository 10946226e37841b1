// The machine is shared (tests may run next to the bench): measure how much CPU went to
// processes other than the bench's own during each run, and wait for a quiet machine before
// starting one. Linux only (/proc); elsewhere these report null and never wait.
//
// "Own" CPU is this process, the server under test, the load generator (counted once reaped:
// /proc/self/stat cutime+cstime) and Redis's own counter when the bench uses Redis.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Linux reports both /proc files in USER_HZ ticks, which is 100 on every mainstream build. */
const TICKS_PER_S = 100;
/** Below this share of the machine used by others, a run counts as quiet. */
export const QUIET_SHARE = 0.05;
const QUIET_WINDOW_MS = 500;

export interface CpuSample {
  /** Ticks the whole machine spent busy in processes (steal included: CPU this VM did not get). */
  busy: number;
  all: number;
  /** Ticks of the bench's own processes. */
  own: number;
  /** Ticks of Redis (from INFO cpu), 0 when not asked for. */
  redis: number;
}

function machineTicks(): { busy: number; all: number } {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (guest is inside user).
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  // Interrupt time is left out of "busy": on loopback it is mostly the bench's own traffic, and
  // the kernel charges it to no process, so it would otherwise show up as someone else's CPU.
  const busy = user + nice + system + steal;
  return { busy, all: busy + idle + iowait + irq + softirq };
}

/** utime + stime (+ cutime + cstime: children already reaped) of a process, in ticks. */
function processTicks(pid: number | 'self', withReapedChildren: boolean): number {
  // Fields after the ")" closing the command name start at field 3; utime..cstime are 14..17.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const own = (f[11] ?? 0) + (f[12] ?? 0);
  return withReapedChildren ? own + (f[13] ?? 0) + (f[14] ?? 0) : own;
}

/** CPU seconds (user + system) a running process has used, or null off Linux or once it is gone. */
export function processCpuSeconds(pid: number): number | null {
  try {
    return processTicks(pid, false) / TICKS_PER_S;
  } catch {
    return null;
  }
}

/** Seconds of CPU Redis has used since it started; counted as the bench's own. */
export type RedisCpuSeconds = () => Promise<number>;

/**
 * The bench's own CPU is this process, its reaped children (the load generator, once a run has
 * ended) and, while they run, the server processes `serverPids` (the server, and its origin).
 */
export async function sampleCpu(redisCpu?: RedisCpuSeconds, serverPids: readonly number[] = []): Promise<CpuSample | null> {
  try {
    const redis = redisCpu ? (await redisCpu()) * TICKS_PER_S : 0;
    const server = serverPids.reduce((sum, pid) => sum + processTicks(pid, false), 0);
    return { ...machineTicks(), own: processTicks('self', true) + server, redis };
  } catch {
    return null; // no /proc: not Linux
  }
}

/** Share of the machine's CPU (0..1) that went to other processes between two samples. */
export function foreignShare(before: CpuSample | null, after: CpuSample | null): number | null {
  if (!before || !after || after.all <= before.all) return null;
  const foreign = after.busy - before.busy - (after.own - before.own) - (after.redis - before.redis);
  return Math.max(foreign, 0) / (after.all - before.all);
}

/**
 * Waits (up to `maxWaitMs`) for a half-second window in which others used less than QUIET_SHARE
 * of the machine; returns the last share seen, so a run that started on a busy machine is marked.
 */
export async function waitForQuiet(maxWaitMs: number): Promise<number | null> {
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    const before = await sampleCpu();
    await sleep(QUIET_WINDOW_MS);
    const share = foreignShare(before, await sampleCpu());
    if (share === null || share < QUIET_SHARE || Date.now() >= deadline) return share;
  }
}
