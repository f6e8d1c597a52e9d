// EventRateLimit (alpha): limits how fast Events are written. Options are the reference's
// configuration (`kind: Configuration`, `limits: [{type, qps, burst, cacheSize}]`) from the admission
// configuration file. Each limit type keys its token buckets differently: Server (one bucket),
// Namespace, User, SourceAndObject (the event's source and involved object); buckets beyond cacheSize
// (default 4096) are dropped least recently used first. A request over any limit gets 429.
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;
const TYPES = ['Server', 'Namespace', 'User', 'SourceAndObject'] as const;
type LimitType = (typeof TYPES)[number];
export interface Limit { type: LimitType; qps: number; burst: number; cacheSize?: number }

/** A token bucket that starts full, as the reference's rate limiter does. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(private qps: number, private burst: number, private now: () => number = Date.now) {
    this.tokens = burst;
    this.last = now();
  }
  tryAccept(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

const keyOf: Record<LimitType, (a: AdmissionAttributes) => string> = {
  Server: () => '',
  Namespace: (a) => a.namespace,
  User: (a) => a.user.username,
  SourceAndObject: (a) => {
    const e = (a.object ?? {}) as J;
    const io: J = e.involvedObject ?? {};
    return [e.source?.component, e.source?.host, io.kind, io.namespace, io.name, io.uid, io.apiVersion].map((x) => x ?? '').join('');
  },
};

/** One limit: its buckets by key, in least-recently-used order (a Map keeps insertion order). */
export class Enforcer {
  private buckets = new Map<string, TokenBucket>();
  private size: number;
  constructor(readonly limit: Limit, private now: () => number = Date.now) {
    this.size = limit.type === 'Server' ? 1 : limit.cacheSize || 4096;
  }
  /** Undefined when accepted, else the reference's reason. */
  accept(a: AdmissionAttributes): string | undefined {
    const key = keyOf[this.limit.type](a);
    let b = this.buckets.get(key);
    if (b) this.buckets.delete(key);
    else b = new TokenBucket(this.limit.qps, this.limit.burst, this.now);
    this.buckets.set(key, b);
    if (this.buckets.size > this.size) this.buckets.delete(this.buckets.keys().next().value!);
    return b.tryAccept() ? undefined : `limit reached on type ${this.limit.type} for key ${key}`;
  }
}

/** Checks the configuration as the reference's validation does; throws on the first problem. */
export function parseLimits(options: Record<string, unknown>): Limit[] {
  const limits = options.limits;
  if (!Array.isArray(limits) || limits.length === 0) throw new Error('EventRateLimit: limits: Required value: must not be empty');
  return limits.map((l: J, i) => {
    const p = `EventRateLimit: limits[${i}]`;
    if (!TYPES.includes(l?.type)) throw new Error(`${p}.type: Unsupported value: ${JSON.stringify(l?.type)}: supported values: "Namespace", "Server", "SourceAndObject", "User"`);
    if (!(typeof l.qps === 'number' && l.qps > 0)) throw new Error(`${p}.qps: Invalid value: ${l.qps}: must be positive`);
    if (!(Number.isInteger(l.burst) && l.burst > 0)) throw new Error(`${p}.burst: Invalid value: ${l.burst}: must be positive`);
    if (l.cacheSize !== undefined && !(Number.isInteger(l.cacheSize) && l.cacheSize >= 0)) throw new Error(`${p}.cacheSize: Invalid value: ${l.cacheSize}: must not be negative`);
    return { type: l.type, qps: l.qps, burst: l.burst, cacheSize: l.cacheSize };
  });
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'EventRateLimit',
  create(options, host) {
    const enforcers = parseLimits(options).map((l) => new Enforcer(l));
    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'events' && !a.subresource,
      validate(a) {
        // every limit takes its token, even after another one refused
        let refused: string | undefined;
        for (const e of enforcers) refused = e.accept(a) ?? refused;
        if (refused) throw host.errors.status(429, 'TooManyRequests', `Too many requests: ${refused}`);
      },
    };
  },
};
export default plugin;
