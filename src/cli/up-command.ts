// `setpoint up` (what `npm start` runs): a real three-member store on this machine, on etcd's
// conventional local ports, with data under ./.setpoint/. Each member is its own `setpoint store`
// process, so killing one shows failover for real. Ctrl-C stops them all cleanly; data is kept.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { MEMBER_NODE_FLAGS } from './member-node-flags.js';

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

function up(o: UpOptions): void {
  const main = fileURLToPath(new URL('./main.js', import.meta.url));
  const dataDir = resolve(o.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const url = (port: number): string => `http://${o.host}:${port}`;
  const initialCluster = MEMBERS.map((m) => `${m.name}=${url(m.peer)}`).join(',');
  const endpoints = MEMBERS.map((m) => url(m.client)).join(',');
  const children = new Map<string, ChildProcess>();
  let stopping = false;

  console.log(`setpoint up: a three-member Setpoint store on this machine (data in ${dataDir}).`);
  console.log('');
  console.log('  Use it with any etcd v3 client, for example etcdctl 3.4:');
  console.log(`    export ETCDCTL_API=3 ETCDCTL_ENDPOINTS=${endpoints}`);
  console.log('    etcdctl put greeting hello && etcdctl get greeting');
  console.log('    etcdctl endpoint status -w table        # who leads');
  console.log('    etcdctl watch --prefix /               # in another terminal');
  console.log('  Health, version and Prometheus metrics on each client port:');
  console.log(`    curl ${url(MEMBERS[0].client)}/health   ${url(MEMBERS[0].client)}/metrics`);
  console.log('  Kill a member (kill -9 <pid>) to see the others elect a leader and carry on.');
  console.log('  Ctrl-C stops every member cleanly; run `npm start` again and the data is still there.');
  console.log('');

  MEMBERS.forEach((m, i) => {
    const args = [
      ...MEMBER_NODE_FLAGS,
      main,
      'store',
      '--name', m.name,
      '--data-dir', join(dataDir, m.name),
      '--listen-client-urls', url(m.client),
      '--advertise-client-urls', url(m.client),
      '--listen-peer-urls', url(m.peer),
      '--initial-advertise-peer-urls', url(m.peer),
      '--initial-cluster', initialCluster,
      '--initial-cluster-token', 'setpoint-up',
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'pipe'], env: { ...process.env, SETPOINT_LOG_FORMAT: 'pretty' } });
    children.set(m.name, child);
    const tag = `${COLORS[i] ?? ''}${m.name}${RESET}`;
    let buf = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        console.log(`${tag} ${buf.slice(0, nl)}`);
        buf = buf.slice(nl + 1);
      }
    });
    child.on('exit', (code, signal) => {
      children.delete(m.name);
      if (!stopping) console.log(`${tag} exited (${signal ?? `code ${code}`}); the other members carry on. Restart everything with npm start.`);
      if (stopping && children.size === 0) process.exit(0);
    });
    console.log(`${tag} pid ${child.pid}: client ${url(m.client)}, peer ${url(m.peer)}`);
  });

  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping every member (the leader hands over first)…');
    for (const c of children.values()) c.kill('SIGTERM');
    if (children.size === 0) process.exit(0);
    setTimeout(() => {
      for (const c of children.values()) c.kill('SIGKILL');
      process.exit(1);
    }, 15_000).unref();
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
