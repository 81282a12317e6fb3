// Node options for a store member's process. Under load a member has hundreds of requests in flight; with
// V8's default young generation (16 MiB semi-spaces) each scavenge found many of them still alive and
// copied them, some into the old generation. 64 MiB semi-spaces let them die young: under `etcdctl check
// perf --load=l` scavenges were 5x rarer with half the pause time in all, and a member used about 5% less
// CPU per write (A/B runs). The young generation also starts at that size: V8 otherwise starts it small
// and grows it only when much survives, so under a light but steady load (1000 watchers, 200 writes/s) a
// member scavenged four times a second, and the longer pauses set the watch latency's p99 (5.3–8.1 ms in
// four rounds, 4.7–6.5 ms starting at 64 MiB; etcd 4.7–5.3). The cost: up to 128 MiB more memory for an
// idle member once it has allocated that much. V8 reads these only at start-up, so they must be on the
// command line: here for the members Setpoint starts itself, and in the shebang of src/cli/main.ts for
// `setpoint store` run directly.
//
// --interrupt-budget=8192 (V8's default 67,584) lets a function be optimized after an eighth of the bytecode
// run. A member's request path at a steady, moderate rate (the API server's writes at 100/s) otherwise runs
// for long stretches in V8's baseline tier: its HTTP/2, gRPC and Raft functions are called a few hundred
// times a second each, often with changing shapes, and stay unoptimized. `npm run bench:txn` on a quiet
// machine (2026-12-03, two rounds): the leader's CPU per paced write 1.37–1.46 ms with it against 1.85–1.90
// without (followers 0.90–0.95 against 1.23–1.37), paced p99 9.4–9.6 ms against 13.6–14.7 (etcd 3.4: 4.2–5.4).
export const MEMBER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--min-semi-space-size=64', '--interrupt-budget=8192'];
