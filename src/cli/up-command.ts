// `setpoint up` (what `npm start` runs): a real three-member store on this machine, on etcd's
// conventional local ports, with data under ./.setpoint/. Each member is its own `setpoint store`
// process, started by the process harness (src/harness), so killing one shows failover for real.
// Ctrl-C stops them all cleanly; data is kept.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { StoreCluster } from '../harness/store-cluster.js';

interface UpOptions {
  dataDir: string;
  host: string;
}

const MEMBERS = [
  { name: 'm1', client: 2379, peer: 2380 },
  { name: 'm2', client: 22379, peer: 22380 },
  { name: 'm3', client: 32379, peer: 32380 },
] as const;

const COLORS = ['\x1b[36m', '\x1b[35m', '\x1b[33m'];
const RESET = '\x1b[0m';

async function up(o: UpOptions): Promise<void> {
  const dataDir = resolve(o.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const tags = new Map<string, string>(MEMBERS.map((m, i) => [m.name, `${COLORS[i] ?? ''}${m.name}${RESET}`]));
  const tag = (name: string): string => tags.get(name) ?? name;
  let stopping = false;
  const cluster = await StoreCluster.create({
    program: 'setpoint',
    names: MEMBERS.map((m) => m.name),
    ports: MEMBERS.map((m) => ({ client: m.client, peer: m.peer })),
    host: o.host,
    dir: dataDir,
    token: 'setpoint-up',
    env: { SETPOINT_LOG_FORMAT: 'pretty' },
    onLine: (name, line) => console.log(`${tag(name)} ${line}`),
    onExit: (m, exit) => {
      if (!stopping) console.log(`${tag(m.name)} exited (${exit.signal ?? `code ${exit.code}`}); the other members carry on. Restart everything with npm start.`);
    },
  });
  const endpoints = cluster.endpoints(MEMBERS.map((m) => m.name)).join(',');
  const first = cluster.clientUrl('m1');

  console.log(`setpoint up: a three-member Setpoint store on this machine (data in ${dataDir}).`);
  console.log('');
  console.log('  Use it with any etcd v3 client, for example etcdctl 3.4:');
  console.log(`    export ETCDCTL_API=3 ETCDCTL_ENDPOINTS=${endpoints}`);
  console.log('    etcdctl put greeting hello && etcdctl get greeting');
  console.log('    etcdctl endpoint status -w table        # who leads');
  console.log('    etcdctl watch --prefix /               # in another terminal');
  console.log('  Health, version and Prometheus metrics on each client port:');
  console.log(`    curl ${first}/health   ${first}/metrics`);
  console.log('  Kill a member (kill -9 <pid>) to see the others elect a leader and carry on.');
  console.log('  Ctrl-C stops every member cleanly; run `npm start` again and the data is still there.');
  console.log('');

  await cluster.startFounders('none');
  for (const m of MEMBERS) console.log(`${tag(m.name)} pid ${cluster.get(m.name).process?.pid ?? '?'}: client ${cluster.clientUrl(m.name)}, peer ${cluster.peerUrl(m.name)}`);

  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping every member (the leader hands over first)…');
    // SIGTERM to all; whoever has not stopped 15 s later is killed, and the exit code says so.
    void cluster.destroy({ signal: 'SIGTERM', graceMs: 15_000 }).then(() => {
      const killed = [...cluster.members.values()].some((m) => m.process?.exitStatus?.signal === 'SIGKILL');
      process.exit(killed ? 1 : 0);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

export function registerUpCommand(program: Command): void {
  program
    .command('up')
    .description('run a three-member store on this machine (ports 2379/22379/32379, data in ./.setpoint)')
    .option('--data-dir <dir>', 'where the members keep their data', '.setpoint')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .action(up);
}
