// A peer transport in a process of its own (member 2 of cluster CLUSTER), for tests that stop a peer
// with SIGSTOP: prints its bound URL as one JSON line, counts heartbeats from member 1 and prints the
// commit of each, until killed.
import { pino } from 'pino';
import { createPeerTransport } from '../../../src/server/peer/transport.js';

const [peerUrl, electionTimeout] = process.argv.slice(2);
if (!peerUrl || !electionTimeout) throw new Error('usage: peer-child <member-1-url> <election-timeout-ms>');
const none = () => Promise.reject(new Error('not in this test'));
const transport = await createPeerTransport({
  memberId: 2n,
  clusterId: '7331',
  listenUrls: ['http://127.0.0.1:0'],
  electionTimeoutMs: Number(electionTimeout),
  logger: pino({ level: 'silent' }),
  handlers: {
    onMessage: (m) => process.stdout.write(`${JSON.stringify({ commit: m.commit })}\n`),
    receiveSnapshot: none,
    leaseKeepAlive: none,
    leaseTimeToLive: none,
  },
  hooks: { reportUnreachable: () => {}, reportSnapshot: () => {}, kvSnapshot: () => (async function* () {})() },
});
transport.addPeer(1n, [peerUrl]);
process.stdout.write(`${JSON.stringify({ url: transport.addresses[0] })}\n`);
