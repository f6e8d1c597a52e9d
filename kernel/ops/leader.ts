// Leader election on a Lease object (coordination.<domain>/v1), the way the reference's controller
// manager does it: whoever holds the Lease runs the controllers; the holder renews it every retry
// period and stops its controllers if it cannot renew within the renew deadline; the others take it
// over once it has not been renewed for the lease duration, measured on their own clock from when
// they last saw it change (so clocks need not agree). A graceful stop releases the Lease at once.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Brand } from '../contracts/brand.js';
import type { Controller, KObject, Logger, ObjectClient, TypeDef } from '../contracts/index.js';
import { isStatusError } from '../contracts/status.js';

export interface LeaderElectionTimings { leaseDurationSeconds: number; renewDeadlineSeconds: number; retryPeriodSeconds: number }

interface LeaseSpec { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number }

/** MicroTime as the reference writes it: RFC 3339 with six fractional digits. */
const microTime = (d: Date) => d.toISOString().replace(/Z$/, '000Z');

export class LeaderElector {
  readonly identity = `${hostname()}_${randomUUID()}`;
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** The Lease as last seen (its resourceVersion) and when, by the local clock. */
  private observed: { rv: string; at: number } | undefined;
  private lastRenew = 0;
  private busy: Promise<void> = Promise.resolve();

  constructor(
    private objects: ObjectClient,
    private leaseType: TypeDef,
    private namespaceType: TypeDef,
    private namespace: string,
    private name: string,
    private timings: LeaderElectionTimings,
    private callbacks: { start(): Promise<void>; stop(): Promise<void> },
    private log: Logger,
  ) {}

  isLeader(): boolean { return this.leading; }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.busy = this.step().catch((e) => this.log.warn('leader election', { lease: `${this.namespace}/${this.name}`, error: String(e) }));
      void this.busy.then(() => { if (!this.stopped) this.timer = setTimeout(tick, this.timings.retryPeriodSeconds * 1000); });
    };
    tick();
  }

  /** Stops trying, stops the controllers if leading and releases the Lease so another server takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.busy;
    if (!this.leading) return;
    await this.demote('stopping');
    const cur = await this.objects.get(this.leaseType, this.namespace, this.name).catch(() => undefined);
    const spec = (cur?.spec ?? {}) as LeaseSpec;
    if (cur && spec.holderIdentity === this.identity) {
      const released: KObject = { ...cur, spec: { ...spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: microTime(new Date()) } };
      await this.objects.update(this.leaseType, released).catch(() => {});
    }
  }

  private async demote(why: string): Promise<void> {
    this.leading = false;
    this.log.warn('leader election: stopping controllers', { lease: `${this.namespace}/${this.name}`, identity: this.identity, reason: why });
    await this.callbacks.stop();
  }

  private async step(): Promise<void> {
    const ok = await this.tryAcquireOrRenew().catch((e) => {
      if (!isStatusError(e) || e.code !== 409) this.log.warn('leader election: lease update failed', { error: String(e) });
      return false;
    });
    const now = Date.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading && !this.stopped) {
        this.leading = true;
        this.log.info('leader election: acquired', { lease: `${this.namespace}/${this.name}`, identity: this.identity });
        await this.callbacks.start();
      }
    } else if (this.leading && now - this.lastRenew > this.timings.renewDeadlineSeconds * 1000) {
      await this.demote('could not renew the lease within the renew deadline');
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const mine: LeaseSpec = { holderIdentity: this.identity, leaseDurationSeconds: this.timings.leaseDurationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 };
    const cur = await this.objects.get(this.leaseType, this.namespace, this.name);
    if (!cur) {
      await this.ensureNamespace();
      await this.objects.create(this.leaseType, { metadata: { name: this.name, namespace: this.namespace }, spec: mine });
      return true;
    }
    const rv = cur.metadata?.resourceVersion ?? '';
    if (this.observed?.rv !== rv) this.observed = { rv, at: now.getTime() };
    const spec = (cur.spec ?? {}) as LeaseSpec;
    const held = spec.holderIdentity && spec.holderIdentity !== this.identity;
    const expired = this.observed.at + (spec.leaseDurationSeconds ?? this.timings.leaseDurationSeconds) * 1000 <= now.getTime();
    if (held && !expired) return false;
    const next: LeaseSpec = spec.holderIdentity === this.identity
      ? { ...spec, ...mine, acquireTime: spec.acquireTime, leaseTransitions: spec.leaseTransitions ?? 0 }
      : { ...mine, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 };
    // The resourceVersion makes this a compare-and-swap: of two servers racing, one gets 409.
    await this.objects.update(this.leaseType, { ...cur, spec: next });
    return true;
  }

  /** The Lease lives in the system namespace, which may not exist yet on a fresh store. */
  private async ensureNamespace(): Promise<void> {
    if (await this.objects.get(this.namespaceType, '', this.namespace)) return;
    try {
      await this.objects.create(this.namespaceType, { metadata: { name: this.namespace } });
    } catch (e) {
      if (!isStatusError(e) || e.code !== 409) throw e;
    }
  }
}

export interface NamedController { name: string; plugin: Controller }

/**
 * The elector of controllers that run on the Lease holder only (with a shared store; those marked
 * perServer, the server's own, run everywhere and are not its business). Its first term runs
 * `firstTerm`; losing the Lease stops them, winning it again starts fresh instances (`nextTerm`).
 * `running` is the server's list of running controllers: a term's start adds to it, its stop leaves those that stay.
 */
export function controllerElector(
  objects: ObjectClient, types: { lookup(group: string, version: string, resource: string): TypeDef | undefined }, brand: Brand,
  timings: LeaderElectionTimings, log: Logger, running: { get(): NamedController[]; set(list: NamedController[]): void }, firstTerm: NamedController[], nextTerm: () => Promise<NamedController[]>,
): LeaderElector {
  const leaseType = types.lookup(`coordination.${brand.domain}`, 'v1', 'leases');
  const nsType = types.lookup('', 'v1', 'namespaces');
  if (!leaseType || !nsType) throw new Error('leader election needs the Lease and Namespace types');
  // Never the reference's own "kube-controller-manager": that one tells us an external controller manager runs (step-aside.ts).
  const name = `${brand.name}-controller-manager`;
  let first: NamedController[] | undefined = firstTerm;
  return new LeaderElector(objects, leaseType, nsType, brand.systemNamespace, name, timings, {
    start: async () => {
      const term = first ?? (await nextTerm());
      first = undefined;
      running.get().push(...term);
      for (const c of term) await c.plugin.start();
    },
    stop: async () => {
      const term = running.get().filter((c) => !c.plugin.perServer);
      running.set(running.get().filter((c) => c.plugin.perServer));
      for (const c of term) await c.plugin.stop();
    },
  }, log);
}
