// The Warning headers of one response, gathered from every step that has something to say (decoding's
// unknown fields, admission webhooks' `warnings`) and written once, just before the status line, so a
// refusal carries them as well as a success. Duplicates are dropped and the total is bounded (4 KiB, as
// Kubernetes bounds it), so a chatty webhook cannot grow a response's headers without limit.
import type { ApiResponse, ResponseStream, WatchStream } from '../handler.js';
import type { Status } from '../status.js';
import type { StorageErrorContext } from '../storage-status.js';
import { warningHeader } from './body.js';

export const MAX_WARNING_HEADER_BYTES = 4096;

export class ResponseWarnings implements ApiResponse {
  private readonly values: string[] = [];
  private size = 0;

  constructor(private readonly res: ApiResponse) {}

  get sent(): boolean {
    return this.res.sent;
  }

  /** One warning's text, sent as `299 - "text"`. */
  add(text: string): void {
    this.push(warningHeader(text));
  }

  private push(value: string): void {
    if (this.values.includes(value) || this.size + value.length > MAX_WARNING_HEADER_BYTES) return;
    this.values.push(value);
    this.size += value.length + 2;
  }

  private flush(): void {
    if (this.values.length > 0) this.res.setHeader('Warning', this.values.join(', '));
  }

  setHeader(name: string, value: string): void {
    // Steps that set Warning themselves (already formatted, comma-joined) join the list rather than replace it.
    if (name.toLowerCase() === 'warning') {
      for (const v of value.split(/, (?=\d{3} )/)) this.push(v);
      return;
    }
    this.res.setHeader(name, value);
  }

  object(code: number, body: unknown, contentType?: string): void {
    this.flush();
    this.res.object(code, body, contentType);
  }

  status(status: Status): void {
    this.flush();
    this.res.status(status);
  }

  error(err: unknown, ctx?: StorageErrorContext): void {
    this.flush();
    this.res.error(err, ctx);
  }

  watch(contentType?: string): WatchStream {
    this.flush();
    return this.res.watch(contentType);
  }

  stream(code: number, contentType: string): ResponseStream {
    this.flush();
    return this.res.stream(code, contentType);
  }
}
