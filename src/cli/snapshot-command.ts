// `setpoint snapshot restore FILE`: a member's data directory from an etcd 3.4 snapshot (`etcdctl snapshot
// save`), with `etcdctl snapshot restore`'s flags and defaults, so a cluster moves from etcd to Setpoint
// (server/embed/restore-snapshot.ts says what is kept). Errors are etcdctl's words after "Error: ", exit 1.
import { Option, type Command } from 'commander';
import { SnapshotImportError } from '../kv/etcd-snapshot-import.js';
import { BoltError } from '../kv/bolt-reader.js';
import { RestoreError, restoreSnapshot } from '../server/embed/restore-snapshot.js';

const hex = (n: bigint): string => n.toString(16).padStart(16, '0');

export function registerSnapshotCommand(program: Command): void {
  const snapshot = program.command('snapshot').description('move data in from etcd: restore an etcd 3.4 snapshot into a new Setpoint member');
  snapshot
    .command('restore <file>')
    .description('make a new member data directory from an etcd snapshot file (run once per member, each with its own --name)')
    .addOption(new Option('--name <name>', 'this member\'s name, as in --initial-cluster (default: default)').default('default', undefined))
    .addOption(new Option('--data-dir <dir>', 'the data directory to create; it must not exist (default: <name>.etcd)'))
    .addOption(new Option('--initial-cluster <list>', 'every member of the new cluster, name=peer-url,… (default: default=http://localhost:2380)').default('default=http://localhost:2380', undefined))
    .addOption(new Option('--initial-cluster-token <token>', 'the new cluster\'s token, the same on every member (default: etcd-cluster)').default('etcd-cluster', undefined))
    .addOption(new Option('--initial-advertise-peer-urls <urls>', "this member's peer URLs, comma-separated (default: http://localhost:2380)").default('http://localhost:2380', undefined))
    .addOption(new Option('--skip-hash-check', 'restore a file without the sha256 etcd appends, or whose hash does not match (default: false)'))
    .action(async (file: string, opts: Record<string, string | boolean | undefined>) => {
      const name = String(opts.name);
      const dataDir = typeof opts.dataDir === 'string' ? opts.dataDir : `${name}.etcd`;
      try {
        console.log(`restoring snapshot ${file} into ${dataDir} as member ${name}`);
        const r = await restoreSnapshot({
          snapshot: file,
          name,
          dataDir,
          initialCluster: String(opts.initialCluster),
          initialClusterToken: String(opts.initialClusterToken),
          initialAdvertisePeerUrls: String(opts.initialAdvertisePeerUrls).split(',').filter((u) => u !== ''),
          skipHashCheck: opts.skipHashCheck === true,
        });
        console.log(
          `restored snapshot: revision ${r.revision}, compacted revision ${r.compactRevision}, ${r.liveKeys} keys (${r.records} revisions), ${r.leases} leases, hash ${r.hash}; member ${hex(r.memberId)} of cluster ${hex(r.clusterId)}`,
        );
        const a = r.auth;
        if (a.users + a.roles > 0 || a.enabled) console.log(`auth: ${a.users} users, ${a.roles} roles, auth ${a.enabled ? 'enabled' : 'disabled'}, auth revision ${a.revision}`);
      } catch (e) {
        if (e instanceof RestoreError || e instanceof SnapshotImportError || e instanceof BoltError) {
          console.error(`Error: ${e.message}`);
          process.exit(1);
        }
        throw e;
      }
    });
}
