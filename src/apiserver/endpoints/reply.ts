// What a built-in endpoint answers, before it is written: endpoints stay pure functions of the request,
// testable without a socket, and the shell writes every reply the same way.

export interface Reply {
  readonly code: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export function jsonReply(code: number, body: unknown, contentType = 'application/json', headers?: Record<string, string>): Reply {
  return { code, contentType, body: JSON.stringify(body) + '\n', ...(headers ? { headers } : {}) };
}

/** Go's http.Error: the text and a newline, plain text, nosniff. */
export function httpErrorReply(code: number, text: string): Reply {
  return { code, contentType: 'text/plain; charset=utf-8', body: text + '\n', headers: { 'X-Content-Type-Options': 'nosniff' } };
}
