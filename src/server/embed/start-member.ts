// Starts one store member from its flags: the member (Raft, storage, kv, watch), its peer transport on
// the peer URLs and its client port (gRPC + /health, /version, /metrics) on the client URLs.
import type { Logger } from 'pino';
import type { StoreFlags } from './store-flags.js';
import { Member } from '../member/member.js';
import { createPeerTransport, parseDialMap } from '../peer/transport.js';
import { fetchMembership } from '../peer/fetch-members.js';
import { loadPeerTls } from '../peer/credentials.js';
import { startClientPort } from './client-port.js';
import { createMetrics } from './metrics.js';
import { JwtTokens } from '../auth/jwt-tokens.js';

export interface RunningMember {
  readonly member: Member;
  readonly clientAddresses: readonly string[];
  readonly peerAddresses: readonly string[];
  /** Leader hands over first, then everything closes. */
  stop(): Promise<void>;
  /** Resolves once the member has stopped on its own (removed from the cluster) or through stop(). */
  readonly done: Promise<void>;
}

export const SETPOINT_VERSION = '0.1.0';

/** A test-only switch that is set: refused when NODE_ENV=production. */
function refuseInProduction(name: string, env: NodeJS.ProcessEnv): void {
  if (env.NODE_ENV === 'production') throw new Error(`${name} is a test-only switch and is refused when NODE_ENV=production`);
}

/** TEST ONLY switch: refused when NODE_ENV=production. */
export function unsafeLocalReadsRequested(env: NodeJS.ProcessEnv): boolean {
  const on = env.SETPOINT_UNSAFE_LOCAL_READS === '1' || env.SETPOINT_UNSAFE_LOCAL_READS === 'true';
  if (on) refuseInProduction('SETPOINT_UNSAFE_LOCAL_READS', env);
  return on;
}

/**
 * TEST ONLY: a leader holds every apply back this many milliseconds after telling its followers of the
 * commit, to widen the window in which followers are ahead of it (a lease granted through a follower, then
 * renewed through the leader, must not look unknown there). Refused when NODE_ENV=production.
 */
export function leaderApplyDelayRequested(env: NodeJS.ProcessEnv): number {
  const raw = env.SETPOINT_TEST_LEADER_APPLY_DELAY_MS;
  if (raw === undefined || raw === '' || raw === '0') return 0;
  refuseInProduction('SETPOINT_TEST_LEADER_APPLY_DELAY_MS', env);
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0 || ms > 60_000) throw new Error(`SETPOINT_TEST_LEADER_APPLY_DELAY_MS: "${raw}" is not a whole number of milliseconds from 0 to 60000`);
  return ms;
}

export async function startMember(flags: StoreFlags, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<RunningMember> {
  const metrics = createMetrics({ serverVersion: '3.4.23', processMetrics: true });
  const unsafeLocalReads = unsafeLocalReadsRequested(env);
  if (unsafeLocalReads) logger.warn('SETPOINT_UNSAFE_LOCAL_READS is on: linearizable reads are served locally and may be stale (test only)');
  const leaderApplyDelayMs = leaderApplyDelayRequested(env);
  if (leaderApplyDelayMs > 0) logger.warn({ ms: leaderApplyDelayMs }, 'SETPOINT_TEST_LEADER_APPLY_DELAY_MS is on: a leader applies each commit late (test only)');
  const dialMap = parseDialMap(env.SETPOINT_PEER_DIAL_MAP);
  const peerTls = flags.peerTls ? await loadPeerTls(flags.peerTls) : undefined;
  let peerAddresses: readonly string[] = [];
  const member = new Member({
    name: flags.name,
    dataDir: flags.dataDir,
    peerURLs: flags.initialAdvertisePeerUrls,
    clientURLs: flags.advertiseClientUrls,
    initialCluster: flags.initialCluster,
    initialClusterState: flags.initialClusterState,
    initialClusterToken: flags.initialClusterToken,
    heartbeatMs: flags.heartbeatInterval,
    electionMs: flags.electionTimeout,
    snapshotCount: flags.snapshotCount,
    snapshotCatchUpEntries: flags.snapshotCatchUpEntries,
    quotaBackendBytes: flags.quotaBackendBytes,
    strictReconfigCheck: flags.strictReconfigCheck,
    auth: { tokenTtlMs: flags.authTokenTtl * 1000, bcryptCost: flags.bcryptCost, ...(flags.authToken.type === 'jwt' ? { jwt: JwtTokens.load(flags.authToken) } : {}) },
    logger,
    metrics,
    unsafeLocalReads,
    leaderApplyDelayMs,
    fetchMembership: (urls) => fetchMembership(urls.map((u) => dialMap.get(u) ?? u), peerTls),
    transport: async ({ memberId, clusterId }, handlers, hooks) => {
      const t = await createPeerTransport({
        memberId,
        clusterId: String(clusterId),
        listenUrls: flags.listenPeerUrls,
        ...(flags.peerTls ? { tls: flags.peerTls } : {}),
        handlers,
        hooks,
        logger,
        electionTimeoutMs: flags.electionTimeout,
        dialMap,
      });
      peerAddresses = t.addresses;
      return t;
    },
  });
  await member.start();
  metrics.serverId.labels(member.memberId.toString(16)).set(1);
  const client = await startClientPort({
    listenUrls: flags.listenClientUrls,
    store: member,
    ...(flags.clientTls ? { tls: flags.clientTls } : {}),
    maxRequestBytes: flags.maxRequestBytes,
    maxConcurrentStreams: flags.maxConcurrentStreams,
    logger,
    metrics,
    electionTimeoutMs: flags.electionTimeout,
    setpointVersion: SETPOINT_VERSION,
  });
  logger.info({ client: client.addresses, peer: peerAddresses, dataDir: flags.dataDir }, 'serving');
  // A member that stops on its own (its removal) takes its client port down with it.
  const done = member.done.then(() => client.close());
  return {
    member,
    clientAddresses: client.addresses,
    peerAddresses,
    done,
    stop: async () => {
      await member.stop();
      await client.close();
    },
  };
}
