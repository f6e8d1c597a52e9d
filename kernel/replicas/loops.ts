// Read loops (--read-loops N; docs/ARCHITECTURE.md "More than one core"): N worker threads, each a
// whole server of its own — its uWebSockets.js app, plugins, pipeline, cache and watch fan-out —
// over a replica of this (the writer) loop's store (replica.ts). The TLS front spreads connections
// over the writer's app and the loops' apps, so reads, watches and the request work of writes
// (decoding, admission, validation, encoding) run on every loop; only the commit runs here.
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { AuditEvent, KV, StorageBackend, StorageEvent } from '../contracts/index.js';
import type { FrontConnMessage } from '../http/front.js';
import { ReplicaSource, SharedRevisions } from './replica.js';
import type { LoopControl, LoopInit, LoopReport } from './thread.js';

interface Loop { worker: Worker; source: ReplicaSource; acks: Map<string, () => void>; socketPath?: string }

export class ReadLoops {
  private loops: Loop[] = [];
  readonly revisions = new SharedRevisions();

  constructor(private readonly backend: StorageBackend, private readonly snapshot: () => { rev: number; kvs: Iterable<KV> },
    /** A loop's audit event, for the writer's i-th audit backend. */
    private readonly audit: (backend: number, event: AuditEvent) => void) {}

  /**
   * Starts `n` loops with the writer's configuration; resolves when every one serves. Behind the TLS
   * front each listens on a socket in `socketDir` (returned); without one, on the configuration's port.
   */
  async start(n: number, config: unknown, socketDir?: string): Promise<string[]> {
    this.publish();
    const started: Promise<void>[] = [];
    for (let i = 1; i <= n; i++) {
      const { port1, port2 } = new MessageChannel();
      const socketPath = socketDir && path.join(socketDir, `loop${i}.sock`);
      const init: LoopInit = { readLoop: i, config, socketPath, replica: port2, revisions: this.revisions.buffer };
      // the process entry, which serves as a read loop off the main thread (thread.ts)
      const worker = new Worker(new URL('../main.js', import.meta.url), { workerData: init, transferList: [port2] });
      const loop: Loop = { worker, source: new ReplicaSource(port1, this.backend, this.snapshot), acks: new Map(), socketPath };
      this.loops.push(loop);
      started.push(new Promise<void>((resolve, reject) => {
        worker.on('message', (m: LoopReport) => {
          if (m.type === 'ack') { loop.acks.get(m.handle)?.(); loop.acks.delete(m.handle); }
          else if (m.type === 'audit') this.audit(m.backend, m.event);
          else if (m.type === 'ready') resolve();
          else if (m.type === 'failed') reject(new Error(`read loop ${i}: ${m.message}`));
        });
        worker.once('error', (e) => reject(new Error(`read loop ${i}: ${e.message}`)));
        worker.once('exit', (code) => {
          for (const a of loop.acks.values()) a();
          loop.acks.clear();
          reject(new Error(`read loop ${i} exited (${code})`));
        });
      }));
    }
    await Promise.all(started);
    return this.loops.flatMap((l) => (l.socketPath ? [l.socketPath] : []));
  }

  /** The writer's revisions, for the loops' consistent reads and watch floors. */
  publish(): void { this.revisions.publish(this.backend.currentRevision(), this.backend.compactedRevision()); }

  /** A batch the writer committed (after its own cache applied it). */
  commit(events: StorageEvent[], rev: number): void {
    this.publish();
    for (const l of this.loops) l.source.commit(events, rev);
  }

  /** A connection's certificate or head, to the loop its connection went to; resolves once that loop has it. */
  route(m: FrontConnMessage): Promise<void> {
    const loop = this.loops[m.backend - 1];
    if (!loop) return Promise.resolve();
    if (m.type === 'gone') { loop.worker.postMessage(m satisfies LoopControl); return Promise.resolve(); }
    return new Promise((resolve) => {
      loop.acks.set(m.handle, resolve);
      loop.worker.postMessage(m satisfies LoopControl);
    });
  }

  /** Each loop stops as a server does (its listener first), then its thread ends. */
  async stop(): Promise<void> {
    await Promise.all(this.loops.map((l) => new Promise<void>((resolve) => {
      const t = setTimeout(() => void l.worker.terminate().then(() => resolve()), 70_000);
      l.worker.once('exit', () => { clearTimeout(t); resolve(); });
      l.worker.postMessage({ type: 'stop' } satisfies LoopControl);
    })));
    this.loops = [];
  }
}
