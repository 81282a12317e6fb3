// Node options for a store member's process. Under load a member has hundreds of requests in flight; with
// V8's default young generation (16 MiB semi-spaces) each scavenge found many of them still alive and
// copied them, some into the old generation. 64 MiB semi-spaces let them die young: scavenges were 5x
// rarer, their pauses half as long in all, and a member used about 5% less CPU per write under `etcdctl check perf --load=l` (A/B runs,
// bench notes in README). V8 reads this only at start-up, so it must be on the command line: here for the
// members Setpoint starts itself, and in the shebang of src/cli/main.ts for `setpoint store` run directly.
export const MEMBER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
