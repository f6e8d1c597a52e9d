// Server logs on standard error: klog-style text (the reference's default) or JSON lines
// (--logging-format=json). Values are always escaped, so client text cannot forge log lines.
import type { Logger } from '../contracts/index.js';

export type LogFormat = 'text' | 'json';

export interface ServerLogger extends Logger {
  /** -v: 0 logs start-up, warnings and errors; 3 adds one line per request, as the reference's -v=3. */
  readonly verbosity: number;
  /** One line at verbosity level v, when the server runs at v or above. */
  v(level: number, msg: string, fields?: Record<string, unknown>): void;
}

const two = (n: number) => String(n).padStart(2, '0');

function textValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(typeof v === 'string' ? v : v === undefined ? null : JSON.stringify(v));
}

/** `I1123 15:04:05.123456   12345] "msg" key="value" n=3`, klog's structured text layout. */
function textLine(level: string, msg: string, fields: Record<string, unknown> | undefined): string {
  const d = new Date();
  const micros = String(d.getMilliseconds() * 1000).padStart(6, '0');
  let line = `${level[0].toUpperCase()}${two(d.getMonth() + 1)}${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${micros} ${String(process.pid).padStart(7)}] ${JSON.stringify(msg)}`;
  for (const k in fields) if (fields[k] !== undefined) line += ` ${k}=${textValue(fields[k])}`;
  return line + '\n';
}

export function makeLogger(format: LogFormat = 'text', verbosity = 0, out: (s: string) => void = (s) => process.stderr.write(s)): ServerLogger {
  const write = (level: string, msg: string, fields?: Record<string, unknown>, v?: number) =>
    out(format === 'json' ? JSON.stringify({ ts: new Date().toISOString(), level, ...(v ? { v } : {}), msg, ...fields }) + '\n' : textLine(level, msg, fields));
  return {
    verbosity,
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    v: (level, msg, fields) => { if (verbosity >= level) write('info', msg, fields, level); },
  };
}

/** How long each step of start-up takes, logged at -v=2 (docs/operations.md, "Start-up time"). */
export function startupSteps(log: ServerLogger): (name: string) => void {
  let at = performance.now();
  return (name) => {
    const now = performance.now();
    log.v(2, 'start-up step', { step: name, ms: Math.round(now - at), sinceProcessStart: Math.round(now) });
    at = now;
  };
}
