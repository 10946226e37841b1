// Recalling leases (redis.ts's head explains leases): a process about to refuse a request for
// credits while other processes' leases hold credits of the same account asks them, over Redis
// pub/sub, to settle those leases now, waits until every listening process said it did (or
// RECALL_WAIT_MS), and decides again. A process that hears a recall settles its lease of that
// account at once and takes no new one for RECALL_HOLD_MS, so the account's last credits are
// decided in Redis, request by request, by every process, instead of moving from one lease to
// the next.
//
// Why a recall rather than smaller leases: a lease already holds at most 1/LEASE_SHARE of the
// balance left (lease.ts), yet a busy process that went quiet keeps its reservation until its
// sweep settles it (a second or two), and during that time another process may see nothing left.
// Shrinking leases further costs every busy key its round trips; a recall costs one publish and
// one settlement, only when a refusal is at stake.
//
// Pub/sub delivers at most once, and only to connected subscribers
// (https://redis.io/docs/latest/develop/interact/pubsub/): PUBLISH answers how many subscribers
// got the message, which is how many answers to wait for; one that never answers (a process that
// died after receiving it) costs the wait, never a wrong decision: its reservation lapses on its
// own (lease.ts, LEASE_GRACE_MS) and is settled by nobody.
//
// Messages on the channel: `r <recall id> <account>` asks; `d <recall id>` answers.
import type { RedisClient } from '../redis/client.js';

/** The longest a refusing process waits for the answers to its recall. */
export const RECALL_WAIT_MS = 250;
/** How long a process that heard a recall of an account takes no lease for it. */
export const RECALL_HOLD_MS = 2_000;

let channels = 0;

interface Wait {
  /** How many answers to wait for: undefined until PUBLISH said. */
  expected: number | undefined;
  got: number;
  done: () => void;
}

export class RecallChannel {
  private sub: RedisClient | undefined;
  private subscribed: Promise<boolean> | undefined;
  private readonly waits = new Map<string, Wait>();
  private readonly prefix = `${process.pid.toString(36)}.${Date.now().toString(36)}.${(channels++).toString(36)}`;
  private ids = 0;
  private closed = false;
  /** Subscribed: recalls of other processes reach this one (a lease is kept only then: redis.ts, install). */
  listening = false;

  constructor(
    private readonly client: RedisClient,
    private readonly subscriber: () => RedisClient,
    private readonly channel: string,
    /** Settles this process's lease of the account, if it has one. */
    private readonly onRecall: (account: string) => Promise<void>,
  ) {}

  /**
   * Subscribes, once (ioredis subscribes again by itself after a reconnection); resolves whether
   * it is subscribed. A process listens from its first lease on: before that it has nothing to settle.
   */
  listen(): Promise<boolean> {
    if (this.subscribed) return this.subscribed;
    if (this.closed) return Promise.resolve(false);
    const sub = this.subscriber();
    this.sub = sub;
    // The connection reconnects by itself; a recall meanwhile is answered by the wait's bound.
    sub.on('error', () => {});
    sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel && !this.closed) this.receive(message);
    });
    // The gateway's connections queue nothing while they connect (redis/client.ts,
    // enableOfflineQueue: false): subscribe once this one is ready.
    const ready = sub.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => sub.once('ready', () => resolve()));
    this.subscribed = ready
      .then(() => sub.subscribe(this.channel))
      .then(
        () => {
          this.listening = !this.closed;
          return true;
        },
        () => {
          this.subscribed = undefined;
          sub.disconnect();
          return false;
        },
      );
    return this.subscribed;
  }

  private receive(message: string): void {
    const [kind, id, account] = message.split(' ');
    if (id === undefined) return;
    if (kind === 'r' && account !== undefined) {
      const answer = () => void this.client.publish(this.channel, `d ${id}`).catch(() => undefined);
      this.onRecall(account).then(answer, answer);
    } else if (kind === 'd') {
      const wait = this.waits.get(id);
      if (wait === undefined) return;
      wait.got++;
      if (wait.expected !== undefined && wait.got >= wait.expected) wait.done();
    }
  }

  /**
   * Asks every listening process (this one too) to settle its lease of the account; resolves when
   * all have answered, or after RECALL_WAIT_MS. Never rejects: a recall that cannot be sent only
   * means the decision is taken again with what Redis has.
   */
  recall(account: string): Promise<void> {
    const id = `${this.prefix}.${(this.ids++).toString(36)}`;
    return new Promise<void>((resolve) => {
      let over = false;
      const done = () => {
        over = true;
        clearTimeout(timer);
        this.waits.delete(id);
        resolve();
      };
      // One bound for all of it: subscribing (a connection still on its way), publishing, answers.
      const timer = setTimeout(done, RECALL_WAIT_MS);
      const wait: Wait = { expected: undefined, got: 0, done };
      void this.listen().then((listening) => {
        if (over) return;
        if (!listening) return done();
        this.waits.set(id, wait);
        this.client.publish(this.channel, `r ${id} ${account}`).then((receivers) => {
          wait.expected = receivers;
          if (wait.got >= receivers) done();
        }, done);
      });
    });
  }

  close(): void {
    this.closed = true;
    this.listening = false;
    for (const wait of this.waits.values()) wait.done();
    this.sub?.disconnect();
  }
}
