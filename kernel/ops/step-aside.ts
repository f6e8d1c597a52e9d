// Our controllers that do an external component's work (the reference's kube-controller-manager or
// kube-scheduler, attached to this server) step aside while it runs, so the two never race over the
// same objects. The component is seen by its leader Lease in the system namespace: held by someone
// and renewed within its lease duration, measured on our clock from when we last saw it change (as
// the leader electors themselves measure it, so clocks need not agree). Config `stepAside` names a
// component as always there (true) or never looked for (false).
import type { Controller, KObject, Logger, ObjectClient, TypeDef } from '../contracts/index.js';
import type { NamedController } from './leader.js';

interface LeaseSpec { holderIdentity?: string; leaseDurationSeconds?: number }

/** Whether an external component holds its leader Lease now; tells its listeners when that changes. */
export class ExternalComponent {
  private held: boolean;
  private seen: { rv: string; at: number; spec: LeaseSpec } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  private listeners = new Set<() => void>();

  constructor(
    private objects: ObjectClient, private leaseType: TypeDef, private namespace: string, readonly name: string,
    private fixed: boolean | undefined, private log: Logger,
  ) {
    this.held = fixed ?? false;
  }

  isHeld(): boolean { return this.held; }
  onChange(fn: () => void): () => void { this.listeners.add(fn); return () => this.listeners.delete(fn); }

  async start(): Promise<void> {
    if (this.fixed !== undefined) return;
    this.unwatch = this.objects.watch(this.leaseType, (type, o) => this.observe(type === 'DELETED' ? undefined : o), { namespace: this.namespace, name: this.name });
    this.observe(await this.objects.get(this.leaseType, this.namespace, this.name));
  }

  stop(): void {
    this.unwatch?.();
    clearTimeout(this.timer);
    this.listeners.clear();
  }

  private observe(lease: KObject | undefined): void {
    const rv = lease?.metadata?.resourceVersion ?? '';
    if (!lease) this.seen = undefined;
    else if (this.seen?.rv !== rv) this.seen = { rv, at: Date.now(), spec: (lease.spec ?? {}) as LeaseSpec };
    this.evaluate();
  }

  /** Held: a holder, and a renewal seen less than its lease duration ago; re-evaluated when that runs out. */
  private evaluate(): void {
    clearTimeout(this.timer);
    const s = this.seen;
    const until = s?.spec.holderIdentity ? s.at + (s.spec.leaseDurationSeconds ?? 15) * 1000 : 0;
    const held = until > Date.now();
    if (held) this.timer = setTimeout(() => this.evaluate(), until - Date.now() + 10).unref();
    if (held === this.held) return;
    this.held = held;
    this.log.info(held ? 'an external component runs: our controllers doing its work step aside' : 'the external component\'s lease lapsed: our controllers doing its work run again',
      { lease: `${this.namespace}/${this.name}`, holder: s?.spec.holderIdentity });
    for (const fn of this.listeners) fn();
  }
}

/**
 * A controller that runs while it is asked to and its external component is away: stopped when the
 * component appears, a fresh instance (`make`) started when it goes.
 */
class SteppingAside implements Controller {
  readonly postStartHooks?: readonly string[];
  readonly healthChecks?: readonly string[];
  readonly externalLease?: string;
  readonly perServer?: boolean;
  readonly oncePerProcess?: boolean;
  private inner: Controller | undefined;
  private spare: Controller | undefined;
  private wanted = false;
  private chain: Promise<void> = Promise.resolve();
  private port: { port: number } | undefined;

  constructor(first: Controller, private make: () => Promise<Controller>, private component: ExternalComponent) {
    this.spare = first;
    this.postStartHooks = first.postStartHooks;
    this.healthChecks = first.healthChecks;
    this.externalLease = first.externalLease;
    this.perServer = first.perServer;
    this.oncePerProcess = first.oncePerProcess;
    component.onChange(() => void this.settle());
  }

  start(): Promise<void> { this.wanted = true; return this.settle(); }
  stop(): Promise<void> { this.wanted = false; return this.settle(); }
  ready(): boolean { return this.inner?.ready?.() ?? true; }
  async listening(info: { port: number }): Promise<void> { this.port = info; await this.inner?.listening?.(info); }

  /** One change at a time: start or stop the inner controller to match what is wanted now. */
  private settle(): Promise<void> {
    this.chain = this.chain.then(async () => {
      const run = this.wanted && !this.component.isHeld();
      if (run && !this.inner) {
        const c = this.spare ?? (await this.make());
        this.spare = undefined;
        await c.start();
        this.inner = c;
        if (this.port) await c.listening?.(this.port);
      } else if (!run && this.inner) {
        const c = this.inner;
        this.inner = undefined;
        await c.stop();
      }
    });
    return this.chain;
  }
}

/** The controllers that name an external component, wrapped to step aside while it runs; the components watched. */
export class StepAside {
  private components = new Map<string, ExternalComponent>();
  constructor(private config: Record<string, boolean>, private objects: ObjectClient, private leaseType: TypeDef | undefined, private namespace: string, private log: Logger) {}

  /** `make(i)` creates a fresh instance of the i-th controller, for when it runs again. */
  wrap(controllers: NamedController[], make: (index: number) => Promise<Controller>): NamedController[] {
    return controllers.map((c, i) => {
      const lease = c.plugin.externalLease;
      if (!lease || !this.leaseType || this.config[lease] === false) return c;
      let component = this.components.get(lease);
      if (!component) this.components.set(lease, (component = new ExternalComponent(this.objects, this.leaseType, this.namespace, lease, this.config[lease], this.log)));
      return { name: c.name, plugin: new SteppingAside(c.plugin, () => make(i), component) };
    });
  }

  async start(): Promise<void> { for (const c of this.components.values()) await c.start(); }
  stop(): void { for (const c of this.components.values()) c.stop(); }
}
