// bcrypt off the member's thread: one worker thread per process (bcrypt-worker.ts), jobs answered in
// order. Where the worker's compiled file is not there (tests that run the TypeScript sources), the
// work is done in place, the same functions either way.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BcryptJob, BcryptResult } from './bcrypt-worker.js';
import { bcryptCompare, bcryptHash } from './bcrypt.js';

const WORKER_FILE = new URL('./bcrypt-worker.js', import.meta.url);

type Job = BcryptJob extends infer J ? (J extends { readonly id: number } ? Omit<J, 'id'> : never) : never;

let worker: Worker | undefined;
let seq = 0;
const waiting = new Map<number, { resolve(v: string | boolean): void; reject(e: Error): void }>();

function failAll(e: Error): void {
  for (const w of waiting.values()) w.reject(e);
  waiting.clear();
  worker = undefined;
}

function theWorker(): Worker | undefined {
  if (worker) return worker;
  if (WORKER_FILE.protocol !== 'file:' || !existsSync(fileURLToPath(WORKER_FILE))) return undefined;
  const w = new Worker(WORKER_FILE);
  w.on('message', (r: BcryptResult) => {
    const job = waiting.get(r.id);
    waiting.delete(r.id);
    if (waiting.size === 0) w.unref();
    if ('error' in r) job?.reject(new Error(r.error));
    else job?.resolve(r.value);
  });
  w.on('error', (e: Error) => failAll(e));
  w.on('exit', () => failAll(new Error('the bcrypt worker exited')));
  // An idle worker does not keep the process alive (unref after the listeners, which would ref it again).
  w.unref();
  worker = w;
  return w;
}

function run(job: Job): Promise<string | boolean> {
  const w = theWorker();
  if (!w) return Promise.resolve(job.op === 'hash' ? bcryptHash(job.password, job.cost) : bcryptCompare(job.password, job.hash));
  const id = seq++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, ...job });
  });
}

export async function hashPassword(password: string, cost: number): Promise<string> {
  return String(await run({ op: 'hash', password, cost }));
}

export async function comparePassword(password: string, hash: string): Promise<boolean> {
  return (await run({ op: 'compare', password, hash })) === true;
}
