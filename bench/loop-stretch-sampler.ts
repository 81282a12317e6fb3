// A sampler to preload into a member for finding what holds its loop (docs/big-requests.md, "2026-12-04"):
//
//   SETPOINT_MEMBER_NODE_ARGS="--import=$PWD/dist/bench/loop-stretch-sampler.js" npm run bench:big -- --side=setpoint
//
// Every millisecond it reads how long the loop's thread has run (/proc/thread-self/schedstat, in ns), and
// for each stretch between two of its firings in which the thread ran more than LOOP_STRETCH_MS (25 unless
// set) it appends a line to /tmp/loop-stretch-<pid>.log:
//
//   HELD <start µs> <end µs> wall=<ms> ran=<ms>
//
// The times are process.hrtime's, in microseconds: the clock of a `--cpu-prof` profile's timestamps and of
// `perf record -k CLOCK_MONOTONIC`, so the samples inside each stretch can be picked out of either. A
// development tool: nothing in Setpoint imports it, and it costs a timer every millisecond.
import { appendFileSync } from 'node:fs';
import { threadRunTime } from '../src/server/embed/loop-delay.js';

const THRESHOLD_MS = Number(process.env.LOOP_STRETCH_MS ?? 25);
const file = `/tmp/loop-stretch-${process.pid}.log`;

/** The loop thread's run time in ns, or the process's CPU time where the kernel gives none. */
const ranNs =
  threadRunTime() ??
  ((): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) * 1000;
  });

let lastT = process.hrtime.bigint();
let lastRan = ranNs();
setInterval(() => {
  const t = process.hrtime.bigint();
  const ran = ranNs();
  const ranMs = (ran - lastRan) / 1e6;
  if (ranMs > THRESHOLD_MS) {
    appendFileSync(file, `HELD ${(lastT / 1000n).toString()} ${(t / 1000n).toString()} wall=${(Number(t - lastT) / 1e6).toFixed(1)} ran=${ranMs.toFixed(1)}\n`);
  }
  lastT = t;
  lastRan = ran;
}, 1).unref();
