// The worker thread that hashes and compares passwords for bcrypt-pool.ts, so the member's thread (its
// Raft loop) never waits on bcrypt's deliberately slow key schedule.
import { parentPort } from 'node:worker_threads';
import { bcryptCompare, bcryptHash } from './bcrypt.js';

export type BcryptJob = { readonly id: number } & ({ readonly op: 'hash'; readonly password: string; readonly cost: number } | { readonly op: 'compare'; readonly password: string; readonly hash: string });
export type BcryptResult = { readonly id: number; readonly value: string | boolean } | { readonly id: number; readonly error: string };

const port = parentPort;
port?.on('message', (job: BcryptJob) => {
  try {
    const value = job.op === 'hash' ? bcryptHash(job.password, job.cost) : bcryptCompare(job.password, job.hash);
    port.postMessage({ id: job.id, value } satisfies BcryptResult);
  } catch (e) {
    port.postMessage({ id: job.id, error: (e as Error).message } satisfies BcryptResult);
  }
});
