// Free TCP ports on the loopback, picked by the kernel (listen on 0) and never handed out twice in a run.
import net from 'node:net';

const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const a = s.address();
        const p = typeof a === 'object' && a ? a.port : 0;
        s.close(() => resolve(p));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}
