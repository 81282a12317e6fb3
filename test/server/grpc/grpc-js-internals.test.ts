// The grpc-js internals this project reaches into are those of one release: package.json pins it, the
// installed one must be it, and any other makes a member fail at start rather than run differently.
import { readFileSync } from 'node:fs';
import { Server } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { GRPC_JS_TESTED, assertGrpcJsVersion, grpcJsVersion, interceptStreams } from '../../../src/server/grpc/grpc-js-internals.js';

describe('the pinned grpc-js', () => {
  it('is what package.json asks for and what is installed', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies['@grpc/grpc-js']).toBe(GRPC_JS_TESTED);
    expect(grpcJsVersion()).toBe(GRPC_JS_TESTED);
    expect(() => assertGrpcJsVersion()).not.toThrow();
  });

  it('refuses any other release, older or newer, naming both', () => {
    for (const v of ['1.14.6', '1.14.8', '1.15.0', '2.0.0']) {
      expect(() => assertGrpcJsVersion(v)).toThrow(new RegExp(`${v.replace(/\./g, '\\.')} is installed.*tested with ${GRPC_JS_TESTED.replace(/\./g, '\\.')}`));
    }
  });

  it('refuses to intercept a Server that is not shaped as expected (not bound: no HTTP/2 server yet)', () => {
    expect(() => interceptStreams(new Server(), 'all', () => undefined)).toThrow(/not as expected/);
  });
});
