// Read loops (--read-loops N; docs/ARCHITECTURE.md "More than one core"): N worker threads, each a
// whole server of its own — its uWebSockets.js app, plugins, pipeline, cache and watch fan-out —
// over a replica of this (the writer) loop's store (replica.ts). The TLS front spreads connections
// over the writer's app and the loops' apps, so reads, watches and the request work of writes
// (decoding, admission, validation, encoding) run on every loop; only the commit runs here.
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { AuditEvent, KV, StorageBackend, StorageEvent } from '../contracts/index.js';
import type { FrontConnMessage } from '../http/front.js';
import { ReplicaSource, SharedRevisions, wireEvents } from './replica.js';
import type { LoopControl, LoopInit, LoopReport } from './thread.js';

interface Loop { worker: Worker; source: ReplicaSource; acks: Map<string, () => void>; socketPath?: string; stopped?: () => void }

export class ReadLoops {
  private loops: Loop[] = [];
  private stopping = false;
  readonly revisions = new SharedRevisions();

  constructor(private readonly backend: StorageBackend, private readonly snapshot: () => { rev: number; kvs: Iterable<KV> },
    /** A loop's audit event, for the writer's i-th audit backend. */
    private readonly audit: (backend: number, event: AuditEvent) => void,
    /** A loop that failed while serving. */
    private readonly failed: (loop: number, why: string) => void) {}

  /**
   * Starts `n` loops with the writer's configuration; resolves when every one serves. Behind the TLS
   * front each listens on a socket in `socketDir` (returned); without one, on the configuration's port.
   */
  async start(n: number, config: unknown, socketDir?: string): Promise<string[]> {
    this.publish();
    const paths = Array.from({ length: n }, (_, i) => socketDir && path.join(socketDir, `loop${i + 1}.sock`));
    await Promise.all(paths.map((p, i) => this.spawn(i + 1, n + 1, config, p)));
    return paths.filter((p): p is string => !!p);
  }

  /**
   * Loop `i` (1-based), ready. A loop's thread never ends before the process does: uWebSockets.js
   * aborts the process when a thread ends with connections open, so a stopped loop stays idle, and
   * one that fails (an uncaught error in it) is reported to `failed`, which stops the server.
   */
  private spawn(i: number, loops: number, config: unknown, socketPath: string | undefined): Promise<void> {
    const { port1, port2 } = new MessageChannel();
    const init: LoopInit = { readLoop: i, loops, config, socketPath, replica: port2, revisions: this.revisions.buffer };
    // the process entry, which serves as a read loop off the main thread (thread.ts)
    const worker = new Worker(new URL('../main.js', import.meta.url), { workerData: init, transferList: [port2] });
    const loop: Loop = { worker, source: new ReplicaSource(port1, this.backend, this.snapshot), acks: new Map(), socketPath };
    this.loops[i - 1] = loop;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on('message', (m: LoopReport) => {
        if (m.type === 'ack') { loop.acks.get(m.handle)?.(); loop.acks.delete(m.handle); }
        else if (m.type === 'audit') this.audit(m.backend, m.event);
        else if (m.type === 'ready') { ready = true; resolve(); }
        else if (m.type === 'stopped') loop.stopped?.();
        else if (m.type === 'failed') {
          if (!ready) reject(new Error(`read loop ${i}: ${m.message}`));
          else if (!this.stopping) this.failed(i, m.message);
        }
      });
      worker.once('error', (e) => (ready ? this.failed(i, e.message) : reject(new Error(`read loop ${i}: ${e.message}`))));
      worker.once('exit', (code) => {
        for (const a of loop.acks.values()) a();
        loop.acks.clear();
        loop.stopped?.();
        if (!ready) reject(new Error(`read loop ${i} exited (${code})`));
        else if (!this.stopping) this.failed(i, `its thread ended (${code})`);
      });
    });
  }

  /** The writer's revisions, for the loops' consistent reads and watch floors. */
  publish(committed = 0): void {
    this.revisions.publish(Math.max(committed, this.revisions.committed(), this.backend.currentRevision()), this.backend.compactedRevision());
  }

  /** A batch the writer committed (after its own cache applied it). */
  commit(events: StorageEvent[], rev: number): void {
    // the batch's revision: inside onCommit the store may not count it as reached yet, and a read on
    // another loop that began after this write was answered must wait for it
    this.publish(rev);
    const wire = wireEvents(events, true);
    for (const l of this.loops) l.source.commit(wire, rev);
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

  /** Each loop stops as a server does (its listener first, then what is in flight); its idle thread ends with the process. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops.map((l) => new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 70_000);
      l.stopped = () => { clearTimeout(t); l.worker.unref(); resolve(); };
      l.worker.postMessage({ type: 'stop' } satisfies LoopControl);
    })));
  }
}
