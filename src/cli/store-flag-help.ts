// What each `setpoint store` flag does, for `setpoint store --help`. The flags and their defaults are
// etcd's (src/server/embed/store-flags.ts); a flag without a line here fails test/cli/help.test.ts, so a
// new flag cannot arrive undocumented.

export const STORE_FLAG_HELP: Record<string, string> = {
  name: 'human-readable name of this member; must match its entry in --initial-cluster',
  'data-dir': 'directory for the Raft log, snapshots and key-value data (default: <name>.etcd)',
  'listen-client-urls': 'comma-separated URLs to serve clients on: the etcd v3 gRPC API plus /health, /version and /metrics (https:// needs --cert-file and --key-file)',
  'advertise-client-urls': 'comma-separated client URLs this member tells the cluster and clients about',
  'listen-peer-urls': 'comma-separated URLs to serve the other members on (Raft messages, snapshots)',
  'initial-advertise-peer-urls': 'comma-separated peer URLs this member tells the cluster about; must match its --initial-cluster entry',
  'initial-cluster': 'the cluster at bootstrap, as name=peerURL pairs separated by commas (default: this member alone)',
  'initial-cluster-state': "'new' to bootstrap a cluster, 'existing' to join one this member was added to with 'member add'",
  'initial-cluster-token': 'cluster token mixed into member and cluster ids, so two clusters bootstrapped from the same URLs do not mix',
  'heartbeat-interval': 'milliseconds between leader heartbeats',
  'election-timeout': 'milliseconds a follower waits without a heartbeat before it campaigns; at least 5 heartbeat intervals',
  'snapshot-count': 'applied entries between Raft snapshots (after one, the log before it can be dropped)',
  'experimental-snapshot-catchup-entries': 'entries kept behind a snapshot so a briefly lagging follower catches up from the log instead of a snapshot',
  'quota-backend-bytes': 'space quota of the key-value data in bytes: a write that would pass it raises the NOSPACE alarm and is refused (0: 2 GiB; at most 8 GiB)',
  'max-request-bytes': 'largest client request, in bytes, that the member accepts',
  'max-concurrent-streams': 'most HTTP/2 streams one client connection may have open at once on the client port; a client queues the rest',
  'cert-file': 'TLS certificate for the client port (PEM)',
  'key-file': 'TLS private key for the client port (PEM)',
  'trusted-ca-file': 'CA bundle that client certificates must chain to (with --client-cert-auth)',
  'client-cert-auth': 'require clients to present a certificate signed by --trusted-ca-file',
  'peer-cert-file': 'TLS certificate for the peer port, also presented to other members as a client certificate (PEM)',
  'peer-key-file': 'TLS private key for the peer port (PEM)',
  'peer-trusted-ca-file': 'CA bundle that peer certificates must chain to (with --peer-client-cert-auth)',
  'peer-client-cert-auth': 'require peers to present a certificate signed by --peer-trusted-ca-file',
  'log-level': "log level: 'debug', 'info', 'warn', 'error', 'fatal' or 'silent'",
  'strict-reconfig-check': 'refuse membership changes that could leave the cluster without a quorum of started members',
};
