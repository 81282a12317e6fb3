// etcd 3.4 wraps its JSON gateway in a websocket proxy: a websocket upgrade to a gateway path becomes a
// POST to that path whose body is the client's messages, each followed by a newline, and every line of the
// answer goes back as one text frame — whatever the status — after which the connection is dropped
// without a close frame. Only Sec-WebSocket-Protocol is forwarded: "Bearer, X" becomes the
// Authorization "Bearer X" (and the subprotocol "Bearer" is answered). A client going away cancels the call.
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import type { Duplex } from 'node:stream';
import type { GatewayHandler, GatewayRequest, GatewayResponse } from './gateway.js';
import { CLOSE_TOO_BIG, WebSocketConnection, acceptKey } from './websocket.js';

function isWebSocketUpgrade(req: IncomingMessage): boolean {
  const tokens = (v: string | undefined): string[] => (v ?? '').toLowerCase().split(',').map((t) => t.trim());
  return req.method === 'GET' && tokens(req.headers.connection).includes('upgrade') && tokens(req.headers.upgrade).includes('websocket');
}

/** The proxy's rewrite of the subprotocol header into the call's Authorization. */
function subprotocolAuthorization(header: string): string {
  const at = header.indexOf('Bearer,');
  return at < 0 ? '' : `Bearer ${header.slice(at + 'Bearer,'.length).trim()}`;
}

/** Go's http.Error on a handshake the websocket library refuses. */
function refuse(socket: Duplex, status: string, text: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${text}\n`);
}

/** The gateway's answer, line by line into text frames. */
class FrameResponse extends EventEmitter implements GatewayResponse {
  statusCode = 200;
  headersSent = false;
  private partial = '';
  private finished = false;

  constructor(private readonly ws: WebSocketConnection) {
    super();
    ws.on('drain', () => this.emit('drain'));
    ws.once('close', () => this.emit('close'));
  }

  get destroyed(): boolean {
    return this.finished;
  }

  setHeader(): this {
    return this;
  }

  flushHeaders(): void {
    this.headersSent = true;
  }

  write(text: string): boolean {
    this.headersSent = true;
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    let ok = true;
    for (const l of lines) ok = this.ws.sendText(l);
    return ok;
  }

  end(text = ''): this {
    if (this.finished) return this;
    this.write(text);
    if (this.partial !== '') this.ws.sendText(this.partial);
    this.finished = true;
    this.ws.terminate();
    return this;
  }
}

/**
 * The client port's upgrade handler: true when it took the connection (a websocket upgrade to a gateway
 * path); anything else is left to be answered as a plain request.
 */
export function gatewayWebsocket(gateway: GatewayHandler): (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean {
  return (req, socket, head) => {
    if (!isWebSocketUpgrade(req)) return false;
    const serve = gateway.forPath(new URL(req.url ?? '/', 'http://localhost').pathname);
    if (!serve) return false;
    const key = req.headers['sec-websocket-key'];
    if (req.headers['sec-websocket-version'] !== '13') {
      refuse(socket, '400 Bad Request', 'Bad Request');
      return true;
    }
    if (typeof key !== 'string' || Buffer.from(key, 'base64').length !== 16) {
      refuse(socket, '400 Bad Request', 'Bad Request');
      return true;
    }
    const protocol = req.headers['sec-websocket-protocol'];
    const answer = ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${acceptKey(key)}`];
    if (protocol?.startsWith('Bearer')) answer.push('Sec-WebSocket-Protocol: Bearer');
    socket.write(answer.join('\r\n') + '\r\n\r\n');
    const ws = new WebSocketConnection(socket, head, gateway.bodyLimit);
    const body: PassThrough & GatewayRequest = Object.assign(new PassThrough(), {
      headers: protocol !== undefined ? { authorization: subprotocolAuthorization(protocol) } : {},
    });
    ws.on('message', (m) => {
      if (body.destroyed) return;
      body.write(m);
      body.write('\n');
    });
    ws.once('close', () => body.destroy());
    // The gateway stopped reading (more than its bound after a unary request): so does the connection.
    body.once('close', () => ws.close(CLOSE_TOO_BIG));
    serve(body, new FrameResponse(ws));
    return true;
  };
}
