// TEST ONLY: the bugs the member's loop can be told to have, so that the simulation (src/sim/member-loop/)
// can show it catches them. Nothing but the simulation's tests and `npm run sim -- --bug` sets one; a
// member started from flags never has one (MemberConfig has no such field).
//
// - 'ack-before-durable': the Ready loop sends every append response before its own write is durable,
//   so a leader counts a follower that could still lose the entry, commits on that count and answers
//   the client before a quorum holds the write on disk.
// - 'read-before-applied': the read barrier releases a linearizable read when its ReadIndex answer
//   arrives, without waiting for the applied index to reach it.
export const PLANTED_LOOP_BUGS = ['ack-before-durable', 'read-before-applied'] as const;
export type PlantedLoopBug = (typeof PLANTED_LOOP_BUGS)[number];
