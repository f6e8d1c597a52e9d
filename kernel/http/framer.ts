// Request framing for the TLS front: uWS parses a request head only if it arrives in one read, or
// else within a 4 KiB fallback buffer fixed when the binary was built; heads split across TLS
// records (a client writing its headers in several sends, a long token) were dropped without an
// answer. The front therefore forwards each request head in one write: it buffers until the blank
// line, answers 431 itself past MAX_HEAD (as Go's server does past its limit, and closes), then
// passes the body through by Content-Length. A chunked body or a protocol upgrade makes the rest of
// the connection plain pass-through (their framing is left to uWS).

/** Longest request head forwarded; longer ones get 431. */
export const MAX_HEAD = 64 * 1024;
const END = Buffer.from('\r\n\r\n');

export const TOO_LARGE = Buffer.from('HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large');

export class RequestFramer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Body bytes still to pass before the next head. */
  private body = 0;
  private raw = false;
  private failed = false;

  /** `forward` sends bytes to uWS; `refuse` answers the client and closes. */
  constructor(private forward: (b: Buffer) => boolean, private refuse: (answer: Buffer) => void) {}

  /** Feeds client bytes; returns false when uWS's side asks to wait (backpressure). */
  push(chunk: Buffer): boolean {
    if (this.failed) return true;
    if (this.raw) return this.forward(chunk);
    let ok = true;
    let rest: Buffer | undefined = chunk;
    while (rest && rest.length) {
      if (this.body > 0) {
        const n = Math.min(this.body, rest.length);
        this.body -= n;
        ok = this.forward(n === rest.length ? rest : rest.subarray(0, n)) && ok;
        rest = rest.subarray(n);
        continue;
      }
      // a head: gather until the blank line
      this.pending.push(rest);
      this.pendingBytes += rest.length;
      rest = undefined;
      const buf = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
      const end = buf.indexOf(END);
      if (end < 0) {
        if (this.pendingBytes > MAX_HEAD) return this.fail();
        this.pending = [buf];
        continue;
      }
      if (end + 4 > MAX_HEAD) return this.fail();
      this.pending = [];
      this.pendingBytes = 0;
      const head = buf.subarray(0, end + 4);
      const framing = bodyFraming(head.toString('latin1'));
      if (framing === 'raw') {
        this.raw = true;
        return this.forward(buf) && ok;
      }
      this.body = framing;
      const n = Math.min(this.body, buf.length - head.length);
      this.body -= n;
      ok = this.forward(buf.subarray(0, head.length + n)) && ok;
      rest = buf.subarray(head.length + n);
    }
    return ok;
  }

  private fail(): boolean {
    this.failed = true;
    this.pending = [];
    this.refuse(TOO_LARGE);
    return true;
  }
}

/** Content-Length of a request head, or 'raw' when the connection must become pass-through. */
function bodyFraming(head: string): number | 'raw' {
  let length = 0;
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (name === 'transfer-encoding' || name === 'upgrade') return 'raw';
    if (name === 'content-length') {
      const n = Number(line.slice(colon + 1).trim());
      // anything odd is uWS's to refuse; from here on only pass bytes through
      if (!Number.isSafeInteger(n) || n < 0) return 'raw';
      length = n;
    }
  }
  return length;
}
