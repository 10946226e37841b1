#!/usr/bin/env node
// The entry of the command line. Its first lines take SIGTERM, SIGINT and SIGHUP (before anything
// else is loaded: loading the gateway takes a moment, and Node's default for each of them ends
// the process at once); the rest of the program is loaded after (src/cli-main.ts) and says where
// they go from then on (HeldSignals.handTo). Until it does, they are kept in arrival order: a
// stop takes effect once the gateway has started, a SIGHUP reloads it once it listens.
//
// These listeners stay for the life of the process; the program swaps what they call, never the
// listeners. Removing the last listener of a signal closes Node's signal handle
// (https://nodejs.org/api/process.html#signal-events), and libuv drops a signal that handle had
// caught but not yet delivered to JavaScript (uv__signal_event checks the handle's signum, which
// uv_signal_stop zeroes: https://github.com/libuv/libuv/blob/v1.x/src/unix/signal.c). A stop sent
// while the program was loading or starting was lost that way when the handlers were swapped.

// Types only: erased from the JavaScript, so nothing of the program is loaded before the signals
// are taken.
import type { HeldSignals, SignalHandler } from './cli-main.js';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];
const held: NodeJS.Signals[] = [];
let handler: SignalHandler | undefined;
const onSignal = (signal: NodeJS.Signals) => {
  if (handler) handler(signal);
  else held.push(signal);
};
for (const signal of SIGNALS) process.on(signal, onSignal);

const signals: HeldSignals = {
  stopRequested: () => held.find((signal) => signal !== 'SIGHUP'),
  handTo(next) {
    handler = next;
    for (const signal of held.splice(0)) next(signal);
  },
  restoreDefaults() {
    // Called from the listener itself, so nothing caught is dropped; then Node's default (the
    // process ends by the signal) applies to this one and to the next.
    signals.handTo((signal) => {
      for (const s of SIGNALS) process.off(s, onSignal);
      process.kill(process.pid, signal);
    });
  },
};

const { run } = await import('./cli-main.js');
run(process.argv.slice(2), signals);
