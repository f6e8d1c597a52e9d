// Request framing and head validation for the TLS front (front-worker.ts), which sees every byte a
// client sends on the secure port before the uWS app does.
//
// Framing: uWS parses a request head only if it arrives in one read (or within a 4 KiB fallback
// buffer fixed when the binary was built), so each head is forwarded in one write; bodies pass by
// Content-Length; a chunked body or a protocol upgrade turns the rest of the connection into plain
// pass-through (their framing is uWS's).
//
// Validation: uWS 20.30 answers nothing to a request it cannot parse — it closes the connection or
// leaves it hanging — and it cannot parse much of what the reference's HTTP stack (Go's net/http
// server with MaxHeaderBytes = 1 MiB, as kube-apiserver sets it) accepts. One linear pass over the
// head's bytes decides, for each request, one of three outcomes:
//   - the head is valid and uWS takes it as it is: forwarded unchanged (the common case, no copies);
//   - Go refuses it: the front gives Go's answer, byte for byte (400 with or without a reason, 431,
//     501, 505, 417), and closes the connection; nothing of that request reaches uWS;
//   - Go accepts it but uWS cannot take it (header names with tchars other than letters, digits and
//     '-', more than 48 header lines, a method outside uWS's list, `*` or absolute-form targets,
//     HTTP/1.0 or 1.2+, bare LF line ends, folded lines, a head over 16 KiB): the parsed head goes to
//     the main thread out of band (`stash`) and uWS gets a small stand-in head that names it in the
//     private header HEAD_REF; uws.ts serves the request from the stashed head. A client's own
//     HEAD_REF header always takes this path, so it is never forwarded and cannot be forged.

/** Go's limit on a request head: http.Server.MaxHeaderBytes (1 MiB in kube-apiserver) plus the 4096 bytes of slack its reader allows. */
export const MAX_HEAD = (1 << 20) + 4096;
/** Heads up to this size go to uWS as they came, when uWS can parse them; larger ones are stashed (uWS only parses a head read in one piece). */
export const DIRECT_HEAD = 16 * 1024;
/** uWS 20.30 drops a request with more header lines than this (measured: 48 pass, 49 are dropped). */
export const UWS_MAX_HEADERS = 48;
/** The private header naming a stashed head (lower case, as uWS reports names). */
export const HEAD_REF = 'x-apiserver-front-head';

/** A request head as Go would read it, for requests uWS cannot take as they are. */
export interface FrontHead {
  method: string;
  /** Origin-form target (path and query); `*` as sent. */
  target: string;
  /** Header names in lower case, values trimmed, folded lines joined, in the order sent. */
  headers: [string, string][];
  http10: boolean;
}

const ERROR_HEADERS = '\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n';
/** Go's answer to a request its reader refuses: the status line and the body carry the same text. */
const goError = (status: string, reason?: string): Buffer => {
  const text = reason ? `${status}: ${reason}` : status;
  return Buffer.from(`HTTP/1.1 ${text}${ERROR_HEADERS}${text}`, 'latin1');
};
export const TOO_LARGE = goError('431 Request Header Fields Too Large');
export const BAD_REQUEST = goError('400 Bad Request');
export const MISSING_HOST = goError('400 Bad Request', 'missing required Host header');
export const MALFORMED_HOST = goError('400 Bad Request', 'malformed Host header');
export const INVALID_HEADER_NAME = goError('400 Bad Request', 'invalid header name');
export const VERSION_NOT_SUPPORTED = goError('505 HTTP Version Not Supported', 'unsupported protocol version');
export const UNSUPPORTED_TE = Buffer.from(`HTTP/1.1 501 Not Implemented${ERROR_HEADERS}Unsupported transfer encoding`, 'latin1');
/** Go's answer to an Expect other than 100-continue (a response, with Date and an empty body). */
export const expectationFailed = (now = new Date()): Buffer =>
  Buffer.from(`HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: ${now.toUTCString()}\r\nContent-Length: 0\r\n\r\n`, 'latin1');

const SP = 0x20, HT = 0x09, CR = 0x0d, LF = 0x0a, COLON = 0x3a, PCT = 0x25, QM = 0x3f, SLASH = 0x2f;

// Byte classes. TOKEN: 0 not a tchar, 1 a tchar uWS takes in header names (letters, digits, '-'), 2 another tchar.
const TOKEN = new Uint8Array(256);
for (let c = 0x30; c <= 0x39; c++) TOKEN[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TOKEN[c] = TOKEN[c + 0x20] = 1;
TOKEN[0x2d] = 1;
for (const c of "!#$%&'*+.^_`|~") TOKEN[c.charCodeAt(0)] = 2;
/** Bytes Go's textproto allows in a header value: HTAB, SP, VCHAR, obs-text. */
const VALUE = new Uint8Array(256);
VALUE[HT] = 1;
for (let c = 0x20; c <= 0x7e; c++) VALUE[c] = 1;
for (let c = 0x80; c <= 0xff; c++) VALUE[c] = 1;
/** Bytes Go allows in a Host header (httpguts.ValidHostHeader). */
const HOST = new Uint8Array(256);
for (let c = 0x30; c <= 0x39; c++) HOST[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) HOST[c] = HOST[c + 0x20] = 1;
for (const c of "!$%&'()*+,-.:;=[]_~") HOST[c.charCodeAt(0)] = 1;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

/** Methods uWS 20.30 parses (it closes the connection on any other). */
const UWS_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT'].map((m) => Buffer.from(m));
const lower = (s: string) => Buffer.from(s, 'latin1');
const N_HOST = lower('host'), N_CL = lower('content-length'), N_TE = lower('transfer-encoding'), N_EXPECT = lower('expect');
const N_UPGRADE = lower('upgrade'), N_REF = lower(HEAD_REF), V_CHUNKED = lower('chunked'), M_CONNECT = lower('CONNECT');
/** Go trims only spaces and tabs around values (textproto.TrimString). */
const trimBlank = (s: string) => s.replace(/^[ \t]+|[ \t]+$/g, '');

/** Whether b[at, at+len) equals the lower-case ASCII `name`, ignoring case (b holds tchars only). */
function named(b: Buffer, at: number, len: number, name: Buffer): boolean {
  if (len !== name.length) return false;
  for (let k = 0; k < len; k++) if ((b[at + k] | 0x20) !== name[k]) return false;
  return true;
}

/** Whether the header value b[from, to) holds `token` (lower case) as one of its comma/space separated tokens, ignoring case (Go's hasToken). */
function hasToken(b: Buffer, from: number, to: number, token: Buffer): boolean {
  const n = token.length;
  for (let s = from; s + n <= to; s++) {
    if (s > from && b[s - 1] !== SP && b[s - 1] !== HT && b[s - 1] !== 0x2c) continue;
    let k = 0;
    while (k < n && (b[s + k] | 0x20) === token[k]) k++;
    if (k === n && (s + n === to || b[s + n] === SP || b[s + n] === HT || b[s + n] === 0x2c)) return true;
  }
  return false;
}
const T_CONTINUE = lower('100-continue');

/** The end of the head (after its blank line) in b, or -1: the first empty line, CRLF or bare LF. */
const BLANK_CRLF = Buffer.from('\n\r\n'), BLANK_LF = Buffer.from('\n\n');
function headEnd(b: Buffer): number {
  const a = b.indexOf(BLANK_CRLF);
  const c = b.indexOf(BLANK_LF);
  if (a < 0) return c < 0 ? -1 : c + 2;
  return c >= 0 && c < a ? c + 2 : a + 3;
}

let words: Uint32Array | undefined;
let wordsOf: ArrayBufferLike | undefined;
/**
 * From b[i] on, skips whole aligned 32-bit words that hold no control byte (below 0x20, or 0x7f) and
 * returns where the first word that may hold one starts; byte checks take over from there. Reads the
 * buffer's memory through one Uint32Array per ArrayBuffer, kept for the next head (Buffers of a
 * socket's reads share pooled ArrayBuffers). Byte order does not matter: all four bytes are tested.
 */
function cleanWords(b: Buffer, i: number): number {
  const base = b.byteOffset;
  while ((base + i) & 3) { if (VALUE[b[i]] !== 1) return i; i++; }
  if (wordsOf !== b.buffer) { wordsOf = b.buffer; words = new Uint32Array(b.buffer, 0, b.buffer.byteLength >>> 2); }
  const w = words!;
  const last = w.length;
  let wi = (base + i) >>> 2;
  while (wi < last) {
    const x = w[wi];
    const d = x ^ 0x7f7f7f7f;
    // exact tests for "some byte of the word is below 0x20" and "some byte is 0x7f" (SWAR)
    if ((((x - 0x20202020) & ~x) | ((d - 0x01010101) & ~d)) & 0x80808080) break;
    wi++;
  }
  return (wi << 2) - base;
}

/** What one pass over a head found (fields of one reused object: no allocation per request). */
interface Verdict {
  /** Answer Go gives instead of serving the request. */
  refuse: Buffer | undefined;
  /** uWS cannot take the head as it came. */
  stash: boolean;
  bodyLength: number;
  chunked: boolean;
  upgrade: boolean;
  http10: boolean;
  post: boolean;
  /** A Content-Length Go takes (up to 2^63-1) but uWS does not (10 digits or more): the body is never read. */
  unreadBody: boolean;
}
const MAX_CL = lower('9223372036854775807');
/** uWS 20.30 closes the connection on a Content-Length of 10 digits or more (measured). */
const UWS_CL_DIGITS = 9;

/**
 * Checks a request head b[0, end) as Go's server reads it (request line, header lines, then the
 * framing and Host rules in Go's order) in one pass over its bytes.
 */
export function inspectHead(b: Buffer, end: number, v: Verdict): void {
  v.refuse = undefined; v.stash = end > DIRECT_HEAD; v.bodyLength = 0; v.chunked = false; v.upgrade = false; v.http10 = false; v.post = false; v.unreadBody = false;
  let i = 0;
  let c = 0;
  // method: one or more tchars, then one space
  while ((c = b[i]) !== SP) {
    if (TOKEN[c] === 0 || i >= end) { v.refuse = BAD_REQUEST; return; }
    i++;
  }
  const mlen = i;
  if (mlen === 0) { v.refuse = BAD_REQUEST; return; }
  let known = false;
  for (const m of UWS_METHODS) if (m.length === mlen && b.compare(m, 0, mlen, 0, mlen) === 0) { known = true; break; }
  if (!known) v.stash = true;
  v.post = mlen === 4 && b[0] === 0x50 && b[1] === 0x4f && b[2] === 0x53 && b[3] === 0x54;
  const connect = mlen === 7 && b.compare(M_CONNECT, 0, 7, 0, 7) === 0;
  const getOrHead = (mlen === 3 && b[0] === 0x47 && b[1] === 0x45 && b[2] === 0x54) || (mlen === 4 && b[0] === 0x48 && b[1] === 0x45 && b[2] === 0x41 && b[3] === 0x44);
  // request target: no control bytes; origin-form, `*`, or absolute-form (a scheme and ':')
  const t0 = ++i;
  let inPath = true;
  while ((c = b[i]) !== SP) {
    if (c < 0x21 || c === 0x7f || i >= end) { v.refuse = BAD_REQUEST; return; }
    if (c === QM) inPath = false;
    else if (c === PCT && inPath && (HEX[b[i + 1]] === 0 || HEX[b[i + 2]] === 0)) { v.refuse = BAD_REQUEST; return; } // Go: invalid URL escape
    i++;
  }
  if (i === t0) { v.refuse = BAD_REQUEST; return; }
  if (b[t0] !== SLASH) {
    if (i - t0 === 1 && b[t0] === 0x2a) v.stash = true;
    else if (schemeEnd(b, t0, i) > 0 || connect) v.stash = true;
    else { v.refuse = BAD_REQUEST; return; } // Go: invalid URI for request
  }
  // version: exactly HTTP/d.d, then CRLF or LF
  i++;
  if (b[i] !== 0x48 || b[i + 1] !== 0x54 || b[i + 2] !== 0x54 || b[i + 3] !== 0x50 || b[i + 4] !== SLASH || b[i + 6] !== 0x2e) { v.refuse = BAD_REQUEST; return; }
  const major = b[i + 5] - 0x30, minor = b[i + 7] - 0x30;
  if (major < 0 || major > 9 || minor < 0 || minor > 9) { v.refuse = BAD_REQUEST; return; }
  i += 8;
  if (b[i] === CR && b[i + 1] === LF) i += 2;
  else if (b[i] === LF) { i++; v.stash = true; }
  else { v.refuse = BAD_REQUEST; return; }
  if (major !== 1 || minor !== 1) v.stash = true; // uWS takes HTTP/1.1 only
  const http10 = major === 1 && minor === 0;
  v.http10 = http10;

  let count = 0, hosts = 0, badHost = false, spaceInName = false;
  let cls = 0, clFrom = 0, clTo = 0, clDiffer = false, clBad = false, clValue = 0;
  let tes = 0, teChunked = false, expect = false, expectContinue = false;
  for (;;) {
    c = b[i];
    if (c === LF) { v.stash = true; break; } // the blank line, bare LF
    if (c === CR && b[i + 1] === LF) break; // the blank line
    if (c === SP || c === HT) {
      // an obsolete line fold: Go joins it to the previous value; not on the first line
      if (count === 0) { v.refuse = BAD_REQUEST; return; }
      v.stash = true;
      while ((c = b[i]) !== LF) {
        if (VALUE[c] === 0 && !(c === CR && b[i + 1] === LF)) { v.refuse = BAD_REQUEST; return; }
        i++;
      }
      i++;
      continue;
    }
    // name: tchars up to the colon (Go lets a space through here and refuses it later)
    const n0 = i;
    for (;;) {
      while (TOKEN[b[i]] === 1) i++;
      if ((c = b[i]) === COLON) break;
      if (TOKEN[c] === 2) v.stash = true;
      else if (c === SP) spaceInName = true;
      else { v.refuse = BAD_REQUEST; return; } // includes CR, LF: a line without a colon
      i++;
    }
    const nlen = i - n0;
    i++;
    // value: leading and trailing blanks are not part of it
    while ((c = b[i]) === SP || c === HT) i++;
    const v0 = i;
    // the hot loop (tokens are long): past 32 bytes a value is checked four bytes at a time, then
    // byte by byte to the line end (the word check always stops before it: CR and LF are control bytes)
    let k = 0;
    while (k < 32 && VALUE[b[i]] === 1) { i++; k++; }
    if (k === 32) i = cleanWords(b, i);
    while (VALUE[b[i]] === 1) i++;
    c = b[i];
    const bareLf = c === LF;
    if (!bareLf && !(c === CR && b[i + 1] === LF)) { v.refuse = BAD_REQUEST; return; }
    let v1 = i;
    while (v1 > v0 && ((c = b[v1 - 1]) === SP || c === HT)) v1--;
    i += bareLf ? 1 : 2;
    if (bareLf) v.stash = true;
    if (nlen === 0) { v.stash = true; continue; } // Go skips a line with an empty name
    count++;
    switch (nlen) {
      case 4:
        if (named(b, n0, 4, N_HOST)) {
          hosts++;
          for (let k = v0; k < v1; k++) if (HOST[b[k]] === 0) badHost = true;
        }
        break;
      case 6:
        if (named(b, n0, 6, N_EXPECT)) { expect = true; expectContinue = hasToken(b, v0, v1, T_CONTINUE); }
        break;
      case 7:
        if (named(b, n0, 7, N_UPGRADE)) v.upgrade = true;
        break;
      case 14:
        if (named(b, n0, 14, N_CL)) {
          if (cls++ === 0) {
            clFrom = v0; clTo = v1;
            if (v1 === v0) v.stash = true; // an empty Content-Length is no Content-Length to Go
            else if (v1 - v0 > 19 || (v1 - v0 === 19 && b.compare(MAX_CL, 0, 19, v0, v1) > 0)) clBad = true; // Go: ParseUint(cl, 10, 63)
            else for (let k = v0; k < v1; k++) {
              const d = b[k] - 0x30;
              if (d < 0 || d > 9) { clBad = true; break; }
              clValue = clValue * 10 + d;
            }
          } else if (v1 - v0 !== clTo - clFrom || b.compare(b, clFrom, clTo, v0, v1) !== 0) clDiffer = true;
        }
        break;
      case 17:
        if (named(b, n0, 17, N_TE)) { tes++; teChunked = v1 - v0 === 7 && named(b, v0, 7, V_CHUNKED); }
        break;
      case 22:
        if (named(b, n0, 22, N_REF)) v.stash = true; // never forwarded as sent
        break;
    }
  }
  if (count > UWS_MAX_HEADERS) v.stash = true;
  // Go's order: its reader (Host count, then Transfer-Encoding, then Content-Length), then the server (version, Host, names, Expect)
  if (hosts > 1) { v.refuse = BAD_REQUEST; return; }
  if (tes > 0 && !http10) {
    if (tes > 1 || !teChunked) { v.refuse = UNSUPPORTED_TE; return; }
    // Both framings (Go serves the chunked one and keeps the connection): a proxy in front reading the other
    // would have a request hidden in the Content-Length span served next. RFC 9112 6.1: 400, and close.
    if (cls > 0) { v.refuse = BAD_REQUEST; return; }
    v.chunked = true;
  } else {
    if (clDiffer || clBad) { v.refuse = BAD_REQUEST; return; }
    if (tes > 0) v.stash = true; // HTTP/1.0: Go ignores Transfer-Encoding
    v.bodyLength = clValue;
    if (cls > 0 && clTo - clFrom > UWS_CL_DIGITS) { v.stash = true; v.unreadBody = true; }
  }
  // Go sends 100 Continue only when a handler reads a body; uWS sends it for any request that asks
  // (twice for a GET), so uWS is not shown the Expect of a request without a body or of a GET or HEAD
  if (expectContinue && ((!v.chunked && v.bodyLength === 0) || getOrHead)) v.stash = true;
  if (major !== 1) { v.refuse = VERSION_NOT_SUPPORTED; return; }
  if (!http10 && hosts === 0 && !connect) { v.refuse = MISSING_HOST; return; }
  if (badHost) { v.refuse = MALFORMED_HOST; return; }
  if (spaceInName) { v.refuse = INVALID_HEADER_NAME; return; }
  if (expect && !expectContinue) { v.refuse = expectationFailed(); return; }
}

/** The index after `scheme:` when b[from, to) starts with a URI scheme (Go's getScheme), else 0. */
function schemeEnd(b: Buffer, from: number, to: number): number {
  for (let k = from; k < to; k++) {
    const c = b[k];
    if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) continue;
    if (k > from && ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e)) continue;
    return c === COLON && k > from ? k + 1 : 0;
  }
  return 0;
}

/** The head b[0, end) as Go reads it, for the stash (a second pass, only for heads uWS cannot take). */
export function readHead(b: Buffer, end: number, v: Verdict): FrontHead {
  const text = b.toString('latin1', 0, end);
  const lines = text.split('\n');
  const requestLine = lines[0].replace(/\r$/, '');
  const s1 = requestLine.indexOf(' ');
  const s2 = requestLine.indexOf(' ', s1 + 1);
  const method = requestLine.slice(0, s1);
  let target = requestLine.slice(s1 + 1, s2);
  if (target[0] !== '/' && target !== '*') {
    // absolute-form (or CONNECT's authority-form): the path and query after the authority
    const afterScheme = schemeEnd(b, s1 + 1, s1 + 1 + target.length) - (s1 + 1);
    let rest = afterScheme > 0 ? target.slice(afterScheme) : '';
    if (rest.startsWith('//')) {
      const p = rest.slice(2).search(/[/?]/);
      rest = p < 0 ? '' : rest.slice(2 + p);
    } else rest = rest.startsWith('/') ? rest : '';
    target = rest === '' || rest[0] === '?' ? '/' + rest : rest;
  }
  const headers: [string, string][] = [];
  const raw = (s: string) => Buffer.from(s, 'latin1').toString('utf8');
  let seenCl = false;
  for (let k = 1; k < lines.length; k++) {
    const line = lines[k].replace(/\r$/, '');
    if (line === '') break;
    if (line[0] === ' ' || line[0] === '\t') {
      const last = headers[headers.length - 1];
      if (last) last[1] = trimBlank(`${last[1]} ${raw(trimBlank(line))}`);
      continue;
    }
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    if (name === '' || name === HEAD_REF) continue;
    const value = raw(trimBlank(line.slice(colon + 1)));
    if (name === 'content-length') {
      if (value === '' || seenCl) continue; // duplicates are one
      seenCl = true;
    }
    if (name === 'transfer-encoding' && v.http10) continue;
    headers.push([name, value]);
  }
  return { method, target, headers, http10: v.http10 };
}

/** The small head uWS gets for a stashed one: framing and upgrade headers only, and the stash's name. */
function standIn(h: FrontHead, v: Verdict, ref: string): Buffer {
  const m = UWS_METHODS.some((x) => x.toString() === h.method) ? h.method : 'POST';
  let head = `${m} / HTTP/1.1\r\nhost: front\r\n`;
  if (v.chunked) head += 'transfer-encoding: chunked\r\n';
  else if (v.bodyLength > 0 && !v.unreadBody) head += `content-length: ${v.bodyLength}\r\n`;
  if (h.http10 || v.unreadBody) head += 'connection: close\r\n';
  for (const [k, val] of h.headers) {
    if (k === 'upgrade' || (k === 'connection' && !h.http10 && !v.unreadBody) || k.startsWith('sec-websocket-') || (k === 'expect' && !h.http10 && (v.chunked || v.bodyLength > 0) && h.method !== 'GET' && h.method !== 'HEAD')) head += `${k}: ${val.replace(/[^\x20-\x7e\t]/g, '')}\r\n`;
  }
  return Buffer.from(`${head}${HEAD_REF}: ${ref}\r\n\r\n`, 'latin1');
}

export interface FramerSink {
  /** Sends bytes to uWS; false asks the client side to wait (backpressure). */
  forward(b: Buffer): boolean;
  /** Answers the client and closes the connection. */
  refuse(answer: Buffer): void;
  /**
   * Hands a head uWS cannot take to the main thread; returns the name uWS will see in HEAD_REF, or
   * undefined to have the head forwarded as it came (a backend other than uWS reads it). Without a
   * stash such heads are refused 431.
   */
  stash?(head: FrontHead): string | undefined;
}

export class RequestFramer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Body bytes still to pass before the next head. */
  private body = 0;
  private raw = false;
  /** Refused, or after an HTTP/1.0 request: nothing more is read as requests. */
  private done = false;
  /** After the body: the connection ends with this request (HTTP/1.0). */
  private last = false;
  private lastWasPost = false;
  private readonly v: Verdict = { refuse: undefined, stash: false, bodyLength: 0, chunked: false, upgrade: false, http10: false, post: false, unreadBody: false };
  /** HTTP/1.0 requests seen (their answers go out as HTTP/1.0, see front-worker.ts). */
  http10First = false;
  private requests = 0;
  private sink: FramerSink;

  constructor(forward: FramerSink['forward'] | FramerSink, refuse?: FramerSink['refuse'], stash?: FramerSink['stash']) {
    this.sink = typeof forward === 'function' ? { forward, refuse: refuse!, stash } : forward;
  }

  /** Feeds client bytes; returns false when uWS's side asks to wait (backpressure). */
  push(chunk: Buffer): boolean {
    if (this.done) return true;
    if (this.raw) return this.sink.forward(chunk);
    let ok = true;
    let rest: Buffer | undefined = chunk;
    while (rest && rest.length) {
      if (this.body > 0) {
        const n = Math.min(this.body, rest.length);
        this.body -= n;
        ok = this.sink.forward(n === rest.length ? rest : rest.subarray(0, n)) && ok;
        rest = rest.subarray(n);
        if (this.body === 0 && this.last) { this.done = true; return ok; }
        continue;
      }
      // a head: gather until the blank line
      this.pending.push(rest);
      this.pendingBytes += rest.length;
      rest = undefined;
      let buf = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
      if (this.lastWasPost) {
        // Go forgives up to 4 CR/LF bytes after a POST's body (RFC 7230 section 3.5)
        let k = 0;
        while (k < 4 && k < buf.length && (buf[k] === CR || buf[k] === LF)) k++;
        if (k === buf.length && k < 4) { this.pending = [buf]; continue; }
        buf = buf.subarray(k);
        this.pendingBytes = buf.length;
        this.lastWasPost = false;
        if (!buf.length) { this.pending = []; continue; }
      }
      if (buf[0] === LF || (buf[0] === CR && buf[1] === LF)) return this.fail(BAD_REQUEST); // an empty request line
      const end = headEnd(buf);
      if (end < 0) {
        if (this.pendingBytes > MAX_HEAD) return this.fail(TOO_LARGE);
        this.pending = [buf];
        continue;
      }
      if (end > MAX_HEAD) return this.fail(TOO_LARGE);
      this.pending = [];
      this.pendingBytes = 0;
      const v = this.v;
      inspectHead(buf, end, v);
      if (v.refuse) return this.fail(v.refuse);
      this.requests++;
      this.lastWasPost = v.post;
      let head = buf.subarray(0, end);
      if (v.stash) {
        if (!this.sink.stash) return this.fail(TOO_LARGE);
        const h = readHead(buf, end, v);
        const ref = this.sink.stash(h);
        if (ref === undefined) v.stash = false;
        else {
          if (h.http10 && this.requests === 1) this.http10First = true;
          head = standIn(h, v, ref);
          if (h.http10) this.last = true;
          if (v.unreadBody) {
            // The kernel answers from the stashed head (413 past its body limit, or 401/403 first);
            // the body itself never goes to uWS, and the connection ends with that answer.
            this.done = true;
            return this.sink.forward(head);
          }
        }
      }
      const after = buf.subarray(end);
      if (v.chunked || v.upgrade) {
        this.raw = true;
        ok = this.sink.forward(v.stash ? Buffer.concat([head, after]) : buf) && ok;
        return ok;
      }
      this.body = v.bodyLength;
      const n = Math.min(this.body, after.length);
      this.body -= n;
      const out = v.stash ? Buffer.concat([head, after.subarray(0, n)]) : buf.subarray(0, end + n);
      ok = this.sink.forward(out) && ok;
      if (this.last && this.body === 0) { this.done = true; return ok; }
      rest = after.subarray(n);
    }
    return ok;
  }

  private fail(answer: Buffer): boolean {
    this.done = true;
    this.pending = [];
    this.sink.refuse(answer);
    return true;
  }
}

/**
 * The answer to an HTTP/1.0 request, as Go's server writes it: status line `HTTP/1.0`, and no
 * chunked framing (an HTTP/1.0 client cannot read it; the end of the body is the end of the
 * connection). uWS answers every request as HTTP/1.1, so the front rewrites that one answer.
 * Used only when the HTTP/1.0 request is the connection's first (and so its only) request.
 */
export class Http10Answer {
  private head: Buffer[] | undefined = [];
  private headBytes = 0;
  private chunked = false;
  /** Chunked body: bytes of the current chunk still to copy, or -1 while reading a size line. */
  private left = -1;
  private line = '';
  private skip = 0;
  /** The whole answer has passed (the connection can close). */
  finished = false;

  /** Rewrites the next bytes uWS sent; returns what goes to the client. */
  feed(d: Buffer): Buffer {
    if (this.finished) return Buffer.alloc(0);
    if (this.head) {
      this.head.push(d);
      this.headBytes += d.length;
      const all = Buffer.concat(this.head, this.headBytes);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return Buffer.alloc(0);
      this.head = undefined;
      let text = all.toString('latin1', 0, end + 4);
      if (text.startsWith('HTTP/1.1 ')) text = 'HTTP/1.0 ' + text.slice(9);
      const te = /\r\ntransfer-encoding: *chunked *\r\n/i;
      this.chunked = te.test(text);
      text = text.replace(te, '\r\n').replace(/\r\nconnection: *close *\r\n/i, '\r\n');
      const rest = all.subarray(end + 4);
      return Buffer.concat([Buffer.from(text, 'latin1'), this.chunked ? this.body(rest) : rest]);
    }
    return this.chunked ? this.body(d) : d;
  }

  private body(d: Buffer): Buffer {
    const out: Buffer[] = [];
    let i = 0;
    while (i < d.length && !this.finished) {
      if (this.skip > 0) { const n = Math.min(this.skip, d.length - i); this.skip -= n; i += n; continue; }
      if (this.left > 0) {
        const n = Math.min(this.left, d.length - i);
        out.push(d.subarray(i, i + n));
        this.left -= n;
        i += n;
        if (this.left === 0) { this.left = -1; this.skip = 2; } // the CRLF after the data
        continue;
      }
      const nl = d.indexOf(LF, i);
      if (nl < 0) { this.line += d.toString('latin1', i); break; }
      this.line += d.toString('latin1', i, nl);
      i = nl + 1;
      const size = parseInt(this.line, 16);
      this.line = '';
      if (!(size > 0)) this.finished = true; // the last chunk (trailers are not sent by uWS)
      else this.left = size;
    }
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }
}
