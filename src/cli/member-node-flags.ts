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
export const MEMBER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64', '--min-semi-space-size=64'];
