// Reads a request body with bounds a hostile client cannot stretch: at most `limit` bytes (a declared
// Content-Length over it is refused before a byte is read), no longer than the request's deadline, and
// no pause between chunks longer than `idleMs`. Failures are Statuses, as Kubernetes answers them.
import { StatusError, statuses } from '../status.js';
import type { NodeRequest } from './node-http.js';

export interface BodyLimits {
  readonly limit: number;
  /** Epoch ms by which the whole body must have arrived (the request's deadline), if any. */
  readonly deadline?: number;
  /** Longest gap between two chunks. */
  readonly idleMs: number;
}

const STALLED = 'request did not complete within requested timeout - the request body stopped arriving';
const TOO_SLOW = 'request did not complete within requested timeout - context deadline exceeded';

export class BodyReader {
  private result: Promise<Buffer> | undefined;
  private finished = false;

  constructor(
    private readonly req: NodeRequest,
    private readonly limits: BodyLimits,
  ) {}

  /** True once the body was read to its end (so the connection can be reused as it is). */
  get complete(): boolean {
    return this.finished;
  }

  read(): Promise<Buffer> {
    this.result ??= this.start();
    return this.result;
  }

  private start(): Promise<Buffer> {
    const { req, limits } = this;
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limits.limit) {
      return Promise.reject(new StatusError(statuses.requestEntityTooLarge(`limit is ${limits.limit}`)));
    }
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let idle: NodeJS.Timeout | undefined;
      let overall: NodeJS.Timeout | undefined;
      const cleanup = (): void => {
        clearTimeout(idle);
        clearTimeout(overall);
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onError);
        req.off('close', onClose);
      };
      const fail = (status: StatusError): void => {
        cleanup();
        // Stop taking bytes: the shell answers, then closes the connection or resets the stream.
        req.pause();
        reject(status);
      };
      const armIdle = (): void => {
        clearTimeout(idle);
        idle = setTimeout(() => fail(new StatusError(statuses.timeout(STALLED))), limits.idleMs);
      };
      const onData = (chunk: Buffer | string): void => {
        const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        size += b.length;
        if (size > limits.limit) {
          fail(new StatusError(statuses.requestEntityTooLarge(`limit is ${limits.limit}`)));
          return;
        }
        chunks.push(b);
        armIdle();
      };
      const onEnd = (): void => {
        cleanup();
        this.finished = true;
        resolve(Buffer.concat(chunks, size));
      };
      const onError = (e: Error): void => {
        cleanup();
        reject(e);
      };
      const onClose = (): void => {
        cleanup();
        reject(new Error('the client closed the request before its body ended'));
      };
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onError);
      req.on('close', onClose);
      armIdle();
      if (limits.deadline !== undefined) {
        overall = setTimeout(() => fail(new StatusError(statuses.timeout(TOO_SLOW))), Math.max(0, limits.deadline - Date.now()));
      }
      if (req.readableEnded) onEnd();
    });
  }
}
