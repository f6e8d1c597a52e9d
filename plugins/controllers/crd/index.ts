// The custom resource definition controller: the reference's naming, establishing and finalizer
// controllers in one serial worker.
//   naming       accepts the requested names unless another definition in the group (or a built-in
//                type of the group) holds them: NamesAccepted, acceptedNames
//   establishing NamesAccepted → Established (InitialNamesAccepted); the types are then served
//   serving      every Established definition's served versions, through PluginHost.serveTypes,
//                again whenever the spec or the accepted names change
//   cleanup      a definition being deleted: Terminating, every instance deleted, then the
//                customresourcecleanup finalizer removed; when it is gone the types stop being served
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { sortVersions } from '../../../kernel/api/discovery.js';
import { apiextensionsDefinitions, CLEANUP_FINALIZER, crdGroup } from '../../types/apiextensions/index.js';
import { customResourceTypes, servingKey } from '../../types/apiextensions/cr-types.js';
import type { WebhookCall } from '../../types/apiextensions/conversion.js';
import { WebhookClient } from '../../admission/webhook-common/client.js';

type J = Record<string, any>;
interface Condition { type: string; status: 'True' | 'False' | 'Unknown'; reason?: string; message?: string; lastTransitionTime?: string }

const RETRY_MS = 200;
const now = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
const isConflictOrGone = (e: unknown) => [404, 409].includes((e as { code?: number })?.code ?? 0);

function condition(crd: KObject, type: string): Condition | undefined {
  return ((crd.status as J | undefined)?.conditions as Condition[] | undefined)?.find((c) => c?.type === type);
}

/** Sets a condition in place; the transition time moves only when the status does (the reference's SetCRDCondition). */
function setCondition(crd: KObject, c: Condition): void {
  const status = (crd.status ??= {}) as J;
  const list: Condition[] = Array.isArray(status.conditions) ? status.conditions : (status.conditions = []);
  const i = list.findIndex((x) => x?.type === c.type);
  if (i < 0) { list.push({ ...c, lastTransitionTime: now() }); return; }
  const old = list[i];
  list[i] = { ...c, lastTransitionTime: old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now() };
}

const owner = (name: string) => `crd:${name}`;

class CRDController {
  /** Every server replica serves the established definitions. */
  readonly perServer = true;
  readonly postStartHooks = ['start-apiextensions-informers', 'start-apiextensions-controllers', 'crd-informer-synced'];
  private readonly crdType: TypeDef;
  private queue = new Set<string>();
  private running = false;
  private stopped = false;
  private timers = new Set<NodeJS.Timeout>();
  private unwatch?: () => void;
  /** Conversion webhooks are called with the admission webhooks' HTTPS client (URL or service, caBundle). */
  private client?: WebhookClient;
  private webhook: WebhookCall = async (cc, body, timeout) => {
    this.client ??= new WebhookClient(this.host);
    return this.client.post('conversion', await this.client.resolve(cc), body, timeout);
  };
  /** What each definition's served types were built from (servingKey), and the types. */
  private serving = new Map<string, { key: string; types: TypeDef[] }>();

  constructor(private host: PluginHost) {
    const t = host.type(crdGroup(host.brand), 'customresourcedefinitions');
    if (!t) throw new Error('the crd controller needs the apiextensions types plugin (CustomResourceDefinition is not served)');
    this.crdType = t;
  }

  async start(): Promise<void> {
    this.unwatch = this.host.objects.watch(this.crdType, (ev, obj) => {
      if (ev === 'DELETED') this.summaries.delete(obj.metadata?.name ?? '');
      else this.remember(obj);
      this.enqueue(obj.metadata?.name ?? '');
    });
    // Definitions established before a restart are served before the first request.
    for (const crd of await this.host.objects.list(this.crdType)) {
      this.remember(crd);
      if (condition(crd, 'Established')?.status === 'True') this.serve(crd);
      this.enqueue(crd.metadata?.name ?? '');
    }
  }

  stop(): void {
    this.stopped = true;
    this.client?.close();
    this.unwatch?.();
    for (const u of this.readWatches.values()) u();
    for (const t of this.timers) clearTimeout(t);
  }

  private enqueue(name: string): void {
    if (!name || this.stopped) return;
    this.queue.add(name);
    if (!this.running) void this.run();
  }

  private later(name: string, ms = RETRY_MS): void {
    const t = setTimeout(() => { this.timers.delete(t); this.enqueue(name); }, ms);
    this.timers.add(t);
  }

  /** One definition at a time: name acceptance must see the names it granted a moment ago. */
  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.size && !this.stopped) {
        const name = this.queue.values().next().value as string;
        this.queue.delete(name);
        try {
          await this.sync(name);
        } catch (e) {
          if (!isConflictOrGone(e)) this.host.log.warn('crd controller: sync failed', { crd: name, error: String((e as Error)?.message ?? e) });
          this.later(name);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async sync(name: string): Promise<void> {
    const crd = await this.host.objects.get(this.crdType, '', name);
    if (!crd) {
      if (this.serving.delete(name)) this.host.serveTypes(owner(name), []);
      this.readWatches.get(name)?.();
      this.readWatches.delete(name);
      // Its names are free again for the others of the group.
      // A definition's name is plural.group.
      this.summaries.delete(name);
      for (const other of this.sameGroup(name.slice(name.indexOf('.') + 1))) this.enqueue(other);
      return;
    }
    if (await this.name(crd)) return; // the status write comes back as an event
    if (await this.establish(crd)) return;
    if (condition(crd, 'Established')?.status === 'True') this.serve(crd);
    if (crd.metadata?.deletionTimestamp) await this.cleanup(crd);
  }

  // ------------------------------------------------------------------ naming

  /**
   * Each definition's group and accepted names, kept from the watch: naming runs once per
   * definition and must not read hundreds of stored definitions of megabytes each to find its group.
   */
  private summaries = new Map<string, { group: string; accepted: J }>();

  private remember(crd: KObject): void {
    const name = crd.metadata?.name;
    if (name) this.summaries.set(name, { group: String((crd.spec as J)?.group ?? ''), accepted: ((crd.status as J | undefined)?.acceptedNames ?? {}) as J });
  }

  /** The names of a group's definitions. */
  private sameGroup(group: unknown): string[] {
    return [...this.summaries].filter(([, v]) => v.group === group).map(([k]) => k);
  }

  /** Names of the group already taken: by other definitions' accepted names and by built-in types. */
  private taken(crd: KObject): { resources: Set<string>; kinds: Set<string> } {
    const group = (crd.spec as J)?.group;
    const resources = new Set<string>();
    const kinds = new Set<string>();
    for (const [name, o] of this.summaries) {
      if (name === crd.metadata?.name || o.group !== group) continue;
      const n = o.accepted;
      for (const r of [n.plural, n.singular, ...(Array.isArray(n.shortNames) ? n.shortNames : [])]) if (r) resources.add(r);
      for (const k of [n.kind, n.listKind]) if (k) kinds.add(k);
    }
    const ours = new Set([...this.serving.values()].flatMap((s) => s.types));
    for (const t of this.host.allTypes()) {
      if (t.group !== group || ours.has(t)) continue;
      for (const r of [t.resource, t.singular, ...(t.shortNames ?? [])]) resources.add(r);
      kinds.add(t.kind);
      kinds.add(`${t.kind}List`);
    }
    return { resources, kinds };
  }

  /** The naming controller's pass; true when it wrote the status. */
  private async name(crd: KObject): Promise<boolean> {
    const spec = (crd.spec ?? {}) as J;
    const requested = (spec.names ?? {}) as J;
    const status = (crd.status ?? {}) as J;
    const accepted = (status.acceptedNames ?? {}) as J;
    if (JSON.stringify(requested) === JSON.stringify(accepted) && condition(crd, 'NamesAccepted')) return false;
    const { resources, kinds } = this.taken(crd);
    const next: J = { ...accepted };
    let cond: Condition = { type: 'NamesAccepted', status: 'Unknown' };
    const fail = (reason: string, message: string) => { cond = { type: 'NamesAccepted', status: 'False', reason, message }; };
    const fresh = (want: unknown, have: unknown, used: Set<string>) => want === have || !used.has(want as string);
    const check = (field: string, used: Set<string>, reason: string) => {
      if (fresh(requested[field], accepted[field], used)) next[field] = requested[field];
      else fail(reason, `${JSON.stringify(requested[field])} is already in use`);
    };
    check('plural', resources, 'PluralConflict');
    check('singular', resources, 'SingularConflict');
    if (JSON.stringify(requested.shortNames) !== JSON.stringify(accepted.shortNames)) {
      const mine = new Set<string>(accepted.shortNames ?? []);
      const errs = ((requested.shortNames ?? []) as string[]).filter((s) => !mine.has(s) && s !== accepted.plural && s !== accepted.singular && resources.has(s)).map((s) => `${JSON.stringify(s)} is already in use`);
      if (errs.length) fail('ShortNamesConflict', errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
      else next.shortNames = requested.shortNames;
    }
    check('kind', kinds, 'KindConflict');
    check('listKind', kinds, 'ListKindConflict');
    if (requested.categories !== undefined) next.categories = requested.categories; else delete next.categories;
    if (next.shortNames === undefined) delete next.shortNames;
    if (cond.status === 'Unknown') cond = { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
    let established: Condition = condition(crd, 'Established') ?? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
    if (established.status !== 'True' && cond.status === 'True') established = { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' };
    const old = condition(crd, 'NamesAccepted');
    if (JSON.stringify(next) === JSON.stringify(accepted) && old && old.status === cond.status && old.reason === cond.reason && old.message === cond.message) return false;
    status.acceptedNames = next;
    crd.status = status;
    setCondition(crd, cond);
    setCondition(crd, { type: established.type, status: established.status, reason: established.reason, message: established.message });
    this.remember(await this.host.objects.update(this.crdType, crd, 'status'));
    // A name this one gave up may be what another definition of the group waits for.
    for (const o of this.sameGroup(spec.group)) if (o !== crd.metadata?.name) this.enqueue(o);
    return true;
  }

  /** The establishing controller's pass; true when it wrote the status. */
  private async establish(crd: KObject): Promise<boolean> {
    if (condition(crd, 'NamesAccepted')?.status !== 'True' || condition(crd, 'Established')?.status === 'True' || crd.metadata?.deletionTimestamp) return false;
    setCondition(crd, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
    await this.host.objects.update(this.crdType, crd, 'status');
    return true;
  }

  // ------------------------------------------------------------------ serving

  private serve(crd: KObject): void {
    const name = crd.metadata!.name!;
    const key = servingKey(crd);
    if (this.serving.get(name)?.key === key) return;
    const types = customResourceTypes(crd, this.host.brand, apiextensionsDefinitions(this.host.brand), sortVersions, this.webhook);
    try {
      this.host.serveTypes(owner(name), types);
      this.serving.set(name, { key, types });
      this.defaultOnRead(name, types);
    } catch (e) {
      this.host.log.warn('crd controller: cannot serve', { crd: name, error: (e as Error).message });
    }
  }

  /** Per served definition: the watch that keeps its read-defaulting set current. */
  private readWatches = new Map<string, () => void>();

  /**
   * Defaulting on read, as the reference does it: a stored object that lacks a default of its
   * schema (stored before the default was added) is shown with it, and nothing is written back.
   * The objects concerned are found once per (re)serving, by applying the storage version's
   * defaults to each stored object; a write defaults the object, so it leaves the set. Until that
   * scan is done every read is defaulted.
   */
  private defaultOnRead(name: string, types: TypeDef[]): void {
    this.readWatches.get(name)?.();
    this.readWatches.delete(name);
    const withDefaults = types.filter((t) => t.defaults);
    if (!withDefaults.length) return;
    const brand = this.host.brand;
    const pending = new Set<string>();
    let scanned = false;
    const key = (o: KObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    for (const t of withDefaults) {
      const defaults = t.defaults!;
      t.readDefaults = {
        any: () => !scanned || pending.size > 0,
        pending: (ns, n) => !scanned || pending.has(`${ns}/${n}`),
        apply: (o) => { const c = structuredClone(o); defaults(c, brand); return c; },
      };
    }
    const written = new Set<string>();
    this.readWatches.set(name, this.host.objects.watch(types[0], (_ev, o) => { pending.delete(key(o)); written.add(key(o)); }));
    const storage = withDefaults.find((t) => t.version === (t.storageVersion ?? t.version)) ?? withDefaults[0];
    void (async () => {
      for (const o of await this.host.objects.list(types[0])) {
        if (written.has(key(o)) || (o.apiVersion && o.apiVersion !== `${storage.group}/${storage.version}`)) continue;
        const c = structuredClone(o);
        storage.defaults!(c, brand);
        if (JSON.stringify(c) !== JSON.stringify(o)) pending.add(key(o));
      }
      scanned = true;
    })().catch((e) => this.host.log.warn('crd controller: read defaulting scan failed', { crd: name, error: String((e as Error)?.message ?? e) }));
  }

  // ------------------------------------------------------------------ cleanup

  private async cleanup(crd: KObject): Promise<void> {
    const name = crd.metadata!.name!;
    const finalizer = CLEANUP_FINALIZER(this.host.brand);
    if (!crd.metadata?.finalizers?.includes(finalizer)) return;
    const terminating = condition(crd, 'Terminating');
    if (terminating?.status !== 'True') {
      setCondition(crd, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
      await this.host.objects.update(this.crdType, crd, 'status');
      return;
    }
    const type = this.serving.get(name)?.types[0];
    if (type) {
      const items = await this.host.objects.list(type);
      for (const o of items) if (!o.metadata?.deletionTimestamp) await this.host.objects.delete(type, o.metadata?.namespace ?? '', o.metadata!.name!);
      if ((await this.host.objects.list(type)).length) {
        // Instances with finalizers of their own go when their controllers let them.
        this.later(name, 1000);
        return;
      }
    }
    setCondition(crd, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' });
    await this.host.objects.update(this.crdType, crd, 'status');
    const fresh = await this.host.objects.get(this.crdType, '', name);
    if (!fresh) return;
    fresh.metadata!.finalizers = (fresh.metadata!.finalizers ?? []).filter((f) => f !== finalizer);
    await this.host.objects.update(this.crdType, fresh);
  }
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'crd',
  create: (_options, host) => {
    // A configuration without the apiextensions types (a `types` list of its own, or
    // --runtime-config switching the group off) has no definitions to serve: nothing to do.
    if (!host.type(crdGroup(host.brand), 'customresourcedefinitions')) {
      host.log.info('crd controller idle: CustomResourceDefinition is not served');
      return { start() {}, stop() {} };
    }
    return new CRDController(host);
  },
};

export default plugin;
