// How the configured controllers run: on a lone server, all of them; with a shared store, those
// marked perServer (the server's own) everywhere and the rest on the holder of the controller Lease,
// fresh instances at each new term (leader.ts); in a read loop, only the perServer ones. Those doing
// an external component's work step aside while it runs (step-aside.ts).
import type { Brand } from '../contracts/brand.js';
import type { Logger, ObjectClient, TypeDef } from '../contracts/index.js';
import type { PluginRef } from './configtypes.js';
import { controllerElector, type LeaderElectionTimings, type LeaderElector, type NamedController } from './leader.js';
import { StepAside } from './step-aside.js';

export interface ControllerRunnerOptions {
  refs: PluginRef[];
  /** Creates the controllers of these entries. */
  load(refs: PluginRef[]): Promise<NamedController[]>;
  /** A read loop (kernel/replicas): it runs what each server keeps for itself. */
  readLoop: boolean;
  /** Leader election: the writer loop runs the non-perServer controllers while it holds the Lease. */
  elect: boolean;
  timings: LeaderElectionTimings;
  stepAside: Record<string, boolean>;
  objects: ObjectClient;
  types: { lookup(group: string, version: string, resource: string): TypeDef | undefined };
  brand: Brand;
  log: Logger;
}

export class ControllerRunner {
  /** The controllers running now (what health checks and `listening` go to). */
  running: NamedController[] = [];
  private elector: LeaderElector | undefined;
  private aside: StepAside;

  constructor(private o: ControllerRunnerOptions) {
    this.aside = new StepAside(o.stepAside, o.objects, o.types.lookup(`coordination.${o.brand.domain}`, 'v1', 'leases'), o.brand.systemNamespace, o.log);
  }

  private async create(refs: PluginRef[]): Promise<NamedController[]> {
    return this.aside.wrap(await this.o.load(refs), async (i) => (await this.o.load([refs[i]]))[0].plugin);
  }

  async start(): Promise<void> {
    const { o } = this;
    const created = await this.create(o.refs);
    this.running = o.readLoop ? created.filter((c) => c.plugin.perServer && !c.plugin.oncePerProcess) : o.elect ? created.filter((c) => c.plugin.perServer) : created;
    await this.aside.start();
    for (const c of this.running) await c.plugin.start();
    if (!o.elect) return;
    const electedRefs = o.refs.filter((_, i) => !created[i].plugin.perServer);
    const firstTerm = created.filter((c) => !c.plugin.perServer);
    const running = { get: () => this.running, set: (list: NamedController[]) => { this.running = list; } };
    this.elector = controllerElector(o.objects, o.types, o.brand, o.timings, o.log, running, firstTerm, () => this.create(electedRefs));
    this.elector.start();
  }

  async stop(): Promise<void> {
    await this.elector?.stop();
    for (const c of this.running) await c.plugin.stop();
    this.aside.stop();
  }
}
