#!/usr/bin/env node
// The entry of the command line. Its first lines hold the signals (before anything else is
// loaded: loading the gateway takes a moment, and Node's default for SIGHUP would end a process
// that is still starting); the rest of the program is loaded after (src/cli-main.ts).
// A SIGTERM or SIGINT held stops the gateway as soon as it has started; a SIGHUP is moot, since
// the configuration is being read now.

// A type only: erased from the JavaScript, so nothing of the program is loaded before the
// signals are held.
import type { HeldSignals } from './cli-main.js';

let stop: NodeJS.Signals | undefined;
const onStop = (signal: NodeJS.Signals) => {
  stop ??= signal;
};
const onHup = () => undefined;
process.on('SIGTERM', onStop);
process.on('SIGINT', onStop);
process.on('SIGHUP', onHup);
const held: HeldSignals = {
  stopRequested: () => stop,
  release() {
    process.off('SIGTERM', onStop);
    process.off('SIGINT', onStop);
    process.off('SIGHUP', onHup);
  },
};

const { run } = await import('./cli-main.js');
run(process.argv.slice(2), held);
