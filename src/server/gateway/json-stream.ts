// Splits a request body into successive JSON values, as Go's json.Decoder reads a streaming gateway
// call's requests (whitespace or nothing between them). Incremental: chunks go in, complete values out.
export class JsonValueSplitter {
  private buf = '';
  private scanned = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private start = -1;

  /** Feeds a chunk; returns the raw text of every value completed by it. */
  push(chunk: string): string[] {
    this.buf += chunk;
    const out: string[] = [];
    for (let i = this.scanned; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (this.start < 0) {
        if (c === ' ' || c === '\n' || c === '\r' || c === '\t') continue;
        this.start = i;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') {
          this.inString = false;
          // A string at the top level is a whole value.
          if (this.depth === 0) {
            out.push(this.buf.slice(this.start, i + 1));
            this.start = -1;
          }
        }
        continue;
      }
      if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth++;
      else if (c === '}' || c === ']') this.depth--;
      // A value other than an object or array ends at once; JSON.parse will judge it.
      if (this.depth <= 0 && (c === '}' || c === ']' || (c !== '"' && i === this.start && c !== '{' && c !== '['))) {
        out.push(this.buf.slice(this.start, i + 1));
        this.start = -1;
        this.depth = 0;
      }
    }
    if (this.start < 0) {
      this.buf = '';
      this.scanned = 0;
    } else {
      this.buf = this.buf.slice(this.start);
      this.scanned = this.buf.length;
      this.start = 0;
    }
    return out;
  }

  /** Text of a value left unfinished when the body ended (empty if none). */
  rest(): string {
    return this.start < 0 ? '' : this.buf.trim();
  }

  /** Characters held for an unfinished value. */
  get pending(): number {
    return this.buf.length;
  }
}
