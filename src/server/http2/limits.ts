// What one client connection may ask of the HTTP/2 server before it is refused or cut off: the limits
// nghttp2 and Node's http2 carry against hostile clients (the 2019 denial-of-service family,
// CVE-2019-9511 to 9518; Rapid Reset, CVE-2023-44487; the 2024 CONTINUATION floods), with their defaults
// where they have one. Each bounds work or memory per frame the client sends, so a client can cost the
// event loop no more than a well-behaved one sending as much.

/** Header fields per request (Node's maxHeaderListPairs); past it the stream is reset with ENHANCE_YOUR_CALM. */
export const MAX_HEADER_LIST_PAIRS = 128;
/** Decoded header list bytes per request, names, values and 32 per field (Node's maxHeaderListSize), announced. */
export const MAX_HEADER_LIST_SIZE = 65_535;
/**
 * A header block's encoded bytes over all its frames. HPACK spends at least a byte per field, so a block
 * that fits the decoded limit is shorter than it; one more frame's worth leaves room for size updates.
 */
export const MAX_HEADER_BLOCK = MAX_HEADER_LIST_SIZE + 16_384;
/** CONTINUATION frames after one HEADERS (nghttp2's default), empty ones included. */
export const MAX_CONTINUATIONS = 8;
/** Entries in one SETTINGS frame (Node's maxSettings). */
export const MAX_SETTINGS_ENTRIES = 32;
/**
 * Concurrent streams per connection, announced as SETTINGS_MAX_CONCURRENT_STREAMS; streams past it are
 * refused (REFUSED_STREAM, which clients retry). The default, set by --max-concurrent-streams: well above
 * what Setpoint's clients open on one connection (etcdctl's check perf keeps one call in flight per
 * connection, the benchmarks 16 calls or 50 watch streams, kubectl's and client-go's watches one stream
 * each), and low enough that a connection's streams stay a bounded cost (Go's HTTP/2 server allows 250,
 * grpc-go and etcd 3.5 any number).
 */
export const DEFAULT_MAX_CONCURRENT_STREAMS = 1000;
/**
 * PING and SETTINGS acknowledgements and RST_STREAMs queued while the client is not reading what was
 * already sent (nghttp2's limit on its outbound control frames): past it, GOAWAY ENHANCE_YOUR_CALM.
 */
export const MAX_UNSENT_CONTROL_FRAMES = 1000;
/**
 * Bytes a connection may hold unsent (responses waiting for the client's windows or its socket): past
 * it, new streams are refused and unary answers reset with ENHANCE_YOUR_CALM (Node's maxSessionMemory).
 */
export const MAX_CONNECTION_BUFFER = 32 * 1024 * 1024;
/**
 * Frames that ask for work and carry nothing (CVE-2019-9518's empty frames, 9513's PRIORITY, repeated
 * SETTINGS, WINDOW_UPDATEs under 1 KiB as in 9511's data dribble, frames for streams already closed,
 * unknown types): a burst of 1000 (Node's maxSessionInvalidFrames), then 100 a second.
 */
export const IDLE_FRAMES = { burst: 1000, perSecond: 100 } as const;
/** A WINDOW_UPDATE opening less than this is counted as an idle frame. */
export const SMALL_WINDOW_UPDATE = 1024;
/**
 * Streams the client resets before they are answered (nghttp2's stream reset rate limit against Rapid
 * Reset; nghttp2 allows a burst of 1000 at 33 a second). Here each such stream has started a whole call
 * before its reset arrives, and 1000 of them allocated ~50 MB: under the attack test a young-generation
 * scavenge landed in the attack window and held the loop for 41-67 ms on a loaded machine. With a burst
 * of 200 no scavenge ran during the attack in three runs (loop held 20-22 ms). Clients that cancel calls
 * (deadlines, closed watches) stay far below 200 at once.
 */
export const CLIENT_RESETS = { burst: 200, perSecond: 33 } as const;
/** Streams this side refuses or resets for the client's fault (Node's maxSessionRejectedStreams, 100). */
export const REFUSED_STREAMS = { burst: 100, perSecond: 10 } as const;
/** After a connection error, how long the GOAWAY may wait behind unsent data before the socket is destroyed. */
export const CLOSE_LINGER_MS = 10_000;

/** A token bucket: `burst` at first, refilled at `perSecond`. */
export class Budget {
  private left: number;
  private at = performance.now();

  constructor(private readonly limit: { readonly burst: number; readonly perSecond: number }) {
    this.left = limit.burst;
  }

  /** Spends one; false once the budget is spent. */
  take(): boolean {
    const now = performance.now();
    this.left = Math.min(this.limit.burst, this.left + ((now - this.at) * this.limit.perSecond) / 1000);
    this.at = now;
    if (this.left < 1) return false;
    this.left -= 1;
    return true;
  }
}
