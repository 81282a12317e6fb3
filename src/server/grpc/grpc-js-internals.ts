// The grpc-js internals this project reaches into: its Server's HTTP/2 servers (interceptStreams, for the
// peer transport's message streams) and a server call's HTTP/2 stream (grpc/coalesce.ts). grpc-js exposes
// neither, and a release may rename them at any time, so package.json pins the version they were written
// and tested against, and a member refuses to start on another rather than silently serve slower.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Server } from '@grpc/grpc-js';
import type { IncomingHttpHeaders, Http2Server, ServerHttp2Stream } from 'node:http2';

/** The grpc-js release these internals were read from; package.json pins the same. */
export const GRPC_JS_TESTED = '1.14.7';

let checked = false;

/** The installed grpc-js release (its package.json, found from its entry point). */
export function grpcJsVersion(): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve('@grpc/grpc-js'));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@grpc/grpc-js' && pkg.version) return pkg.version;
    } catch {
      // not the package's root yet
    }
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the installed @grpc/grpc-js package.json');
    dir = up;
  }
}

/** Throws unless the installed grpc-js is the release the internals were tested with. */
export function assertGrpcJsVersion(version = grpcJsVersion()): void {
  if (checked && version === GRPC_JS_TESTED) return;
  if (version !== GRPC_JS_TESTED) {
    throw new Error(`@grpc/grpc-js ${version} is installed, but Setpoint reaches into grpc-js internals tested with ${GRPC_JS_TESTED} only: install ${GRPC_JS_TESTED} (npm ci), or test the new release and update GRPC_JS_TESTED and package.json together`);
  }
  checked = true;
}

/** The grpc-js internals interceptStreams() relies on. */
interface GrpcServerInternals {
  readonly http2Servers?: Map<Http2Server, unknown>;
  onStreamOpened?(stream: ServerHttp2Stream): void;
}

type StreamListener = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => void;

/**
 * Puts `take` in front of grpc-js's 'stream' listener on the HTTP/2 servers of a bound grpc-js Server —
 * the last one it made, or all of them. A stream for which `take` returns no handler goes on to grpc-js;
 * one it takes is counted as open for grpc-js's idle-connection timer, then handed to the handler.
 * Throws if grpc-js is not the release tested, or not shaped as that release is.
 */
export function interceptStreams(
  server: Server,
  which: 'last' | 'all',
  take: (headers: IncomingHttpHeaders) => ((stream: ServerHttp2Stream) => void) | undefined,
): void {
  assertGrpcJsVersion();
  const internals = server as unknown as GrpcServerInternals;
  const servers = internals.http2Servers;
  if (!(servers instanceof Map) || servers.size === 0 || typeof internals.onStreamOpened !== 'function') {
    throw new Error('grpc-js Server internals are not as expected (http2Servers, onStreamOpened): is the Server bound?');
  }
  const targets = which === 'last' ? [[...servers.keys()].at(-1) as Http2Server] : [...servers.keys()];
  if (targets.some((h) => h.listeners('stream').length !== 1)) throw new Error("grpc-js's HTTP/2 server does not have exactly one 'stream' listener");
  const opened = internals.onStreamOpened.bind(server);
  for (const h2server of targets) {
    const grpcJs = h2server.listeners('stream')[0] as StreamListener;
    h2server.removeListener('stream', grpcJs);
    h2server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
      const handle = take(headers);
      if (!handle) {
        grpcJs(stream, headers, ...rest);
        return;
      }
      opened(stream);
      handle(stream);
    });
  }
}
