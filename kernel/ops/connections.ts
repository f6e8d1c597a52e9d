// How many client connections a node:tls listener takes at once (the TLS front's on the default
// port, Node's own on Node 22/24 and --mtls-port): past it, a new connection is closed as it arrives
// and the others are served on. Two things bound it:
// - memory: an idle TLS connection costs 44-55 KiB outside the V8 heap on Node's own TLS stack, so
//   --max-connections (default 10,000) holds it to about 550 MiB;
// - file descriptors: with every descriptor taken by connections, what the server must open fails
//   (a worker thread to check a large body failed with EMFILE and took the process down, measured),
//   so a quarter of the open-file limit (at most 1,500: LevelDB alone keeps up to 1,000 table files
//   open) is kept for the store, threads, logs and outbound connections.
// The reference bounds neither (Go raises its open-file limit to the hard one at start).
import { readFileSync } from 'node:fs';

export const DEFAULT_MAX_CONNECTIONS = 10_000;
/** Descriptors kept for everything but client connections, at most. */
const RESERVED_FDS = 1_500;

/** The soft open-file limit of this process (from /proc); Infinity where it cannot be read or is unlimited. */
export function openFileLimit(): number {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : Infinity;
  } catch {
    return Infinity;
  }
}

/**
 * The connections a listener takes: `max` (--max-connections), and no more than the open-file limit
 * leaves once its reserve is kept, at `fdsPerConnection` descriptors each (three behind the TLS front:
 * the client's socket and both ends of the hop to uWS; one on Node's own TLS stack).
 */
export function connectionLimit(max = DEFAULT_MAX_CONNECTIONS, fdsPerConnection = 1, files = openFileLimit()): number {
  if (!Number.isFinite(files)) return max;
  const usable = files - Math.min(RESERVED_FDS, Math.floor(files / 4));
  return Math.max(1, Math.min(max, Math.floor(usable / fdsPerConnection)));
}
