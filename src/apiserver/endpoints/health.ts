// /healthz, /livez and /readyz as kube-apiserver formats them: `ok` when every check passes, the
// per-check list (`[+]ping ok`, `[-]etcd failed: reason withheld`, then `readyz check passed`) with
// ?verbose or on failure (500), ?exclude=<name> to skip a check, and /readyz/<name> for one check.
// Reasons stay out of the public body (anonymous clients read it) and go to the log.
import type { Logger } from 'pino';
import { httpErrorReply, type Reply } from './reply.js';

export interface HealthCheck {
  readonly name: string;
  /** Resolves when healthy; the rejection's message is logged, never sent. */
  check(): Promise<void>;
}

export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';

const TEXT = 'text/plain; charset=utf-8';

function quoted(names: readonly string[]): string {
  return names.map((n) => JSON.stringify(n)).join(',');
}

export class HealthChecks {
  constructor(
    private readonly checks: Readonly<Record<HealthEndpoint, readonly HealthCheck[]>>,
    private readonly log: Logger,
  ) {}

  /** The reply for /<endpoint> or /<endpoint>/<check>; undefined when no such check exists (404). */
  async reply(endpoint: HealthEndpoint, check: string | undefined, query: URLSearchParams): Promise<Reply | undefined> {
    const checks = this.checks[endpoint];
    if (check !== undefined) {
      const c = checks.find((x) => x.name === check);
      if (!c) return undefined;
      try {
        await c.check();
        return { code: 200, contentType: TEXT, body: 'ok' };
      } catch (e) {
        return httpErrorReply(500, `internal server error: ${(e as Error).message}`);
      }
    }
    const excluded = new Set(query.getAll('exclude'));
    const lines: string[] = [];
    const failed: string[] = [];
    const logged: string[] = [];
    const results = await Promise.all(
      checks.map(async (c) => {
        if (excluded.has(c.name)) return { c, skipped: true as const };
        try {
          await c.check();
          return { c, ok: true as const };
        } catch (e) {
          return { c, ok: false as const, err: e as Error };
        }
      }),
    );
    for (const r of results) {
      if ('skipped' in r) {
        excluded.delete(r.c.name);
        lines.push(`[+]${r.c.name} excluded: ok`);
      } else if (r.ok) {
        lines.push(`[+]${r.c.name} ok`);
      } else {
        lines.push(`[-]${r.c.name} failed: reason withheld`);
        logged.push(`[-]${r.c.name} failed: ${r.err?.message ?? 'unknown'}`);
        failed.push(r.c.name);
      }
    }
    if (excluded.size > 0) lines.push(`warn: some health checks cannot be excluded: no matches for ${quoted([...excluded].sort())}`);
    const out = lines.map((l) => l + '\n').join('');
    if (failed.length > 0) {
      this.log.info({ endpoint, failed: logged }, `${endpoint} check failed`);
      return httpErrorReply(500, `${out}${endpoint} check failed`);
    }
    if (!query.has('verbose')) return { code: 200, contentType: TEXT, body: 'ok', headers: { 'X-Content-Type-Options': 'nosniff' } };
    return { code: 200, contentType: TEXT, body: `${out}${endpoint} check passed\n`, headers: { 'X-Content-Type-Options': 'nosniff' } };
  }
}

/**
 * A check that asks `probe` at most once per `ttlMs` however often it is polled, and shares one probe
 * among concurrent callers: an anonymous client hammering /readyz costs the store nothing extra.
 */
export function cachedCheck(name: string, probe: () => Promise<void>, opts: { timeoutMs: number; ttlMs: number }): HealthCheck {
  // `done` is unset while the probe runs: callers meanwhile share it.
  let last: { done?: number; result: Promise<void> } | undefined;
  const run = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${name} check timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    });
    try {
      await Promise.race([probe(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    name,
    check(): Promise<void> {
      if (last !== undefined && (last.done === undefined || Date.now() - last.done < opts.ttlMs)) return last.result;
      const entry: { done?: number; result: Promise<void> } = { result: run() };
      entry.result.then(
        () => (entry.done = Date.now()),
        () => (entry.done = Date.now()),
      );
      last = entry;
      return entry.result;
    },
  };
}
