// A small etcd v3 client on @grpc/grpc-js: unary KV calls with a deadline and member failover, and
// raw Watch streams. One gRPC channel per member URL (--etcd-servers); calls go to the current member
// and move to the next when it is unreachable. Errors become the Status the API answers with:
// unreachable → 503 ServiceUnavailable, deadline → 504 Timeout.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { StatusError, errors } from '../../../kernel/contracts/status.js';
import type { Codec } from './proto.js';

export interface ClientOptions {
  servers: string[];
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** Deadline of each unary call (ms). */
  timeoutMs: number;
}

type Method<Req, Res> = Codec<Req, Res> & { path: string };

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': -1,
  'grpc.max_send_message_length': -1,
  // a member that comes back is found within seconds, not after the default two-minute backoff
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
};

/** The grpc error for a call that never left this process (no connection): safe to send again elsewhere. */
export function neverSent(e: unknown): boolean {
  const err = e as grpc.ServiceError;
  return err?.code === grpc.status.UNAVAILABLE && /No connection established|failed to connect|ECONNREFUSED/i.test(err.details ?? '');
}

/** A Status for a failed etcd call. */
export function storageError(e: unknown): StatusError {
  if (e instanceof StatusError) return e;
  const err = e as grpc.ServiceError;
  // grpc's details end with a resolver note that tells a client nothing
  const what = (err?.details || err?.message || String(e)).replace(/\.?\s*Resolution note:.*$/s, '').replace('Last error: Error: ', 'last error: ');
  if (err?.code === grpc.status.DEADLINE_EXCEEDED) return errors.timeout(`etcd request timed out: ${what}`, 1);
  if (err?.code === grpc.status.UNAVAILABLE || err?.code === grpc.status.CANCELLED) {
    const se = new StatusError(503, 'ServiceUnavailable', `etcd is unavailable: ${what}`, { retryAfterSeconds: 1 });
    se.headers = { 'Retry-After': '1' };
    return se;
  }
  return new StatusError(500, 'InternalError', `etcd: ${what}`);
}

export class EtcdClient {
  private channels: grpc.Client[];
  private current = 0;
  readonly timeoutMs: number;

  constructor(opts: ClientOptions) {
    if (!opts.servers.length) throw new Error('etcd3 storage: no servers (--etcd-servers)');
    this.timeoutMs = opts.timeoutMs;
    this.channels = opts.servers.map((s) => {
      const u = new URL(s.includes('://') ? s : `http://${s}`);
      const port = u.port || '2379';
      const target = `${u.hostname}:${port}`;
      let creds: grpc.ChannelCredentials;
      if (u.protocol === 'https:') {
        const read = (f?: string) => (f ? readFileSync(f) : null);
        creds = grpc.credentials.createSsl(read(opts.caFile), read(opts.keyFile), read(opts.certFile));
      } else if (u.protocol === 'http:') {
        creds = grpc.credentials.createInsecure();
      } else {
        throw new Error(`etcd3 storage: server URL ${s} must be http:// or https://`);
      }
      return new grpc.Client(target, creds, CHANNEL_OPTIONS);
    });
  }

  /** Moves calls (and new watch streams) to the next member. */
  rotate(from: grpc.Client): void {
    if (this.channels[this.current] === from) this.current = (this.current + 1) % this.channels.length;
  }

  private once<Req, Res>(ch: grpc.Client, m: Method<Req, Res>, req: Req, timeoutMs: number): Promise<Res> {
    return new Promise((resolve, reject) => {
      ch.makeUnaryRequest(m.path, m.encode, m.decode, req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res!)));
    });
  }

  /**
   * One unary call. `idempotent` calls (reads, compaction) are tried on every member in turn when one
   * cannot be reached or times out; a write moves on only when it provably never left (no
   * connection), so it can never be applied twice.
   */
  async call<Req, Res>(m: Method<Req, Res>, req: Req, idempotent: boolean, timeoutMs = this.timeoutMs): Promise<Res> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (let i = 0; i < this.channels.length; i++) {
      const ch = this.channels[this.current];
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        return await this.once(ch, m, req, left);
      } catch (e) {
        last = e;
        const code = (e as grpc.ServiceError).code;
        const retry = neverSent(e) || (idempotent && (code === grpc.status.UNAVAILABLE || code === grpc.status.DEADLINE_EXCEEDED));
        if (!retry) throw storageError(e);
        this.rotate(ch);
      }
    }
    throw storageError(last ?? Object.assign(new Error('deadline exceeded'), { code: grpc.status.DEADLINE_EXCEEDED }));
  }

  /** A raw Watch stream on the current member; the caller writes WatchRequests and reads WatchResponses. */
  watchStream<Req, Res>(m: Method<Req, Res>): { stream: grpc.ClientDuplexStream<Req, Res>; channel: grpc.Client } {
    const channel = this.channels[this.current];
    const stream = channel.makeBidiStreamRequest(m.path, m.encode, m.decode, new grpc.Metadata(), {});
    return { stream, channel };
  }

  close(): void {
    for (const c of this.channels) c.close();
  }
}
