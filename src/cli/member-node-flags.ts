// Node options for a store member's process. Under load a member has hundreds of requests in flight; with
// V8's default young generation (16 MiB semi-spaces) each scavenge found many of them still alive and
// copied them, some into the old generation. 64 MiB semi-spaces let them die young: under `etcdctl check
// perf --load=l` scavenges were 5x rarer with half the pause time in all, and a member used about 5% less
// CPU per write (A/B runs). V8 reads this only at start-up, so it must be on the command line: here for
// the members Setpoint starts itself, and in the shebang of src/cli/main.ts for `setpoint store` run
// directly.
export const MEMBER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
