// A read loop's thread (loops.ts starts it on kernel/main.js): a server over a replica of the writer
// loop's store, serving the uWS app the TLS front gives its share of the connections to.
import { parentPort, type MessagePort } from 'node:worker_threads';
import type { AuditEvent, StorageBackend } from '../contracts/index.js';
import { PeerTable, revive, type FrontConnMessage } from '../http/front.js';
import { ReplicaBackend, SharedRevisions } from './replica.js';

/** What a read loop's thread starts from. */
export interface LoopInit {
  readLoop: number;
  /** The writer and its read loops. */
  loops: number;
  /** The writer's configuration, as the loop serves it (the Server's LoopRole says what differs). */
  config: unknown;
  /** The Unix socket its uWS app listens on, behind the TLS front; unset: it shares the secure port. */
  socketPath?: string;
  replica: MessagePort;
  revisions: SharedArrayBuffer;
}

/** How a read loop's server differs from the writer's: its store, its socket and its certificate table. */
export interface LoopRole {
  index: number;
  loops: number;
  backend: StorageBackend;
  socketPath?: string;
  peers: PeerTable;
  /** An audit event for the writer's backend `backend` (the i-th configured). */
  audit(backend: number, event: AuditEvent): void;
}

/** Writer → loop, on the worker's own port. */
export type LoopControl = FrontConnMessage | { type: 'stop' };
/** Loop → writer. */
export type LoopReport = { type: 'ack'; handle: string } | { type: 'ready' } | { type: 'failed'; message: string } | { type: 'stopped' }
  | { type: 'audit'; backend: number; event: AuditEvent };

interface LoopServer { start(): Promise<void>; stop(): Promise<void> }

export function runReadLoop<C>(init: LoopInit, makeServer: (config: C, role: LoopRole) => LoopServer): void {
  const port = parentPort!;
  const report = (m: LoopReport) => port.postMessage(m);
  const peers = new PeerTable();
  const backend = new ReplicaBackend(init.replica, new SharedRevisions(init.revisions));
  const audit = (b: number, event: AuditEvent) => report({ type: 'audit', backend: b, event });
  const server = makeServer(init.config as C, { index: init.readLoop, loops: init.loops, socketPath: init.socketPath, peers, backend, audit });
  port.on('message', (m: LoopControl) => {
    if (m.type === 'peer') { peers.set(m.handle, { peer: revive(m.peer), remoteAddress: m.remoteAddress }); report({ type: 'ack', handle: m.handle }); }
    else if (m.type === 'head') { peers.putHead(m.handle, m.head); report({ type: 'ack', handle: m.handle }); }
    else if (m.type === 'gone') peers.delete(m.handle);
    // the listening socket is closed before the thread ends (uSockets' poll handle would abort it)
    else if (m.type === 'stop') void server.stop().finally(() => report({ type: 'stopped' }));
  });
  // the thread must not end with connections open (loops.ts): an error nothing caught is the writer's to act on
  const failed = (e: unknown) => report({ type: 'failed', message: e instanceof Error ? e.stack ?? e.message : String(e) });
  process.on('uncaughtException', failed);
  process.on('unhandledRejection', failed);
  server.start().then(() => report({ type: 'ready' }), failed);
}
