// Snapshots on a member: taking one every snapshot-count entries (and after a member joins) and trimming
// the log behind it; staging the key-value state a leader sends until the Ready carrying its snapshot has
// been persisted, then installing it.
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Message, Snapshot } from '../../raft/types.js';
import type { MemberCore } from './member-core.js';
import { Membership } from './membership.js';

export class SnapshotHandoff {
  private lastSnapshotIndex: number;
  private snapshotNow = false;
  /** A snapshot received from the leader, staged on disk until its Ready is applied. */
  private staged: string | undefined;

  constructor(private readonly c: MemberCore) {
    this.lastSnapshotIndex = c.storage.snapshot().metadata.index;
  }

  /** A member joined: the next check takes a snapshot whatever the count, so it can catch up from it. */
  soon(): void {
    this.snapshotNow = true;
  }

  /** Takes a Raft snapshot every snapshot-count entries (and after a member joins), then trims the log. */
  async maybeTake(): Promise<void> {
    const applied = this.c.node.applied();
    if (!this.snapshotNow && applied - this.lastSnapshotIndex < this.c.cfg.snapshotCount) return;
    if (applied <= this.lastSnapshotIndex) return;
    this.snapshotNow = false;
    // The key-value state up to `applied` must be on disk before the log that could rebuild it goes.
    await this.c.kv.flush(true);
    await this.c.storage.createSnapshot(applied, this.c.node.confState(), this.c.membership.encode());
    this.lastSnapshotIndex = applied;
    const compactTo = applied - this.c.cfg.snapshotCatchUpEntries;
    if (compactTo > this.c.storage.firstIndex()) await this.c.storage.compact(compactTo);
    this.c.log.debug({ index: applied, compactTo }, 'snapshot taken');
  }

  /** The leader's key-value state arrived with snapshot message `m`: stage it on disk, then step `m`. */
  async receive(m: Message, kv: AsyncIterable<Uint8Array>): Promise<void> {
    const path = join(this.c.memberDir, `snapshot-${m.snapshot?.metadata.index ?? 0}.tmp`);
    await writeChunks(path, kv);
    this.staged = path;
    this.c.node.step(m);
    this.c.kick();
  }

  /** A snapshot from the leader was persisted: replace the key-value state with the staged copy. */
  async install(snap: Snapshot): Promise<void> {
    const c = this.c;
    c.membership = Membership.decode(snap.data);
    for (const m of c.membership.members.values()) if (m.id !== c.memberId) c.transport.addPeer(m.id, m.peerURLs);
    const staged = this.staged;
    this.staged = undefined;
    if (staged) {
      await c.kv.replaceWith(readChunks(staged));
      await rm(staged, { force: true });
    }
    this.lastSnapshotIndex = snap.metadata.index;
    c.log.info({ index: snap.metadata.index, revision: c.kv.currentRev }, 'installed snapshot from leader');
  }
}

/** Stages snapshot chunks in a file: length-prefixed records. */
async function writeChunks(path: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
  const fh = await open(path, 'w');
  try {
    for await (const c of chunks) {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(c.length, 0);
      await fh.write(len);
      await fh.write(c);
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function* readChunks(path: string): AsyncGenerator<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const len = Buffer.alloc(4);
    for (;;) {
      const r = await fh.read(len, 0, 4, null);
      if (r.bytesRead < 4) return;
      const n = len.readUInt32BE(0);
      const buf = Buffer.alloc(n);
      const got = await fh.read(buf, 0, n, null);
      if (got.bytesRead < n) throw new Error(`${path}: truncated snapshot chunk`);
      yield buf;
    }
  } finally {
    await fh.close();
  }
}
