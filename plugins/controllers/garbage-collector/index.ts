// The garbage collector: deletes objects whose owners (metadata.ownerReferences) are gone, and
// carries out Foreground and Orphan deletion, which the registry only marks with the
// `foregroundDeletion` and `orphan` finalizers.
//
// An in-memory graph, kept current from watch events, maps every object by uid and every owner uid
// to the uids of its dependents, so each event costs only the references it touches. Work goes
// through a deduplicating queue with a few workers and retries with backoff.
import { CONTRACT_VERSION, type KObject, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';
/** Parallel workers: enough to cascade through many objects, few enough to stay polite. */
const WORKERS = 4;
/** Retry backoff after a failure: doubles from the base up to the cap. */
const RETRY_BASE_MS = 50;
const RETRY_MAX_MS = 30_000;
/** Read-modify-write attempts on a conflict before handing the item back to the queue. */
const CONFLICT_ATTEMPTS = 5;
/** Rounds of lost races logged at -v=2 before they are warned of. */
const QUIET_CONFLICTS = 5;

interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

interface Node {
  uid: string;
  type: TypeDef;
  namespace: string;
  name: string;
  /** Owner uid → whether this object blocks that owner's foreground deletion. */
  owners: Map<string, boolean>;
  beingDeleted: boolean;
  /** deletionTimestamp and the foregroundDeletion finalizer: waiting for its dependents to go. */
  deletingDependents: boolean;
  /** deletionTimestamp and the orphan finalizer: waiting for its dependents to be let go. */
  orphaning: boolean;
}

type Event = 'ADDED' | 'MODIFIED' | 'DELETED';

const isConflict = (e: unknown) => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 409;

/** The well-formed owner references of an object; anything malformed is skipped. */
function ownerRefs(obj: KObject | undefined): OwnerRef[] {
  const raw = obj?.metadata?.ownerReferences;
  if (!Array.isArray(raw)) return [];
  const out: OwnerRef[] = [];
  for (const r of raw) {
    if (typeof r !== 'object' || r === null) continue;
    const o = r as Record<string, unknown>;
    if (typeof o.uid !== 'string' || !o.uid) continue;
    out.push({
      apiVersion: typeof o.apiVersion === 'string' ? o.apiVersion : '',
      kind: typeof o.kind === 'string' ? o.kind : '',
      name: typeof o.name === 'string' ? o.name : '',
      uid: o.uid,
      controller: o.controller === true ? true : undefined,
      blockOwnerDeletion: o.blockOwnerDeletion === true ? true : undefined,
    });
  }
  return out;
}

function finalizersOf(obj: KObject | undefined): string[] {
  const f = obj?.metadata?.finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

const storagePrefix = (t: TypeDef) => `/${(t.storageGroup ?? t.group) || 'core'}/${t.storageResource ?? t.resource}/`;

function splitApiVersion(apiVersion: string): { group: string; version: string } | undefined {
  const parts = apiVersion.split('/');
  if (parts.length === 1 && parts[0]) return { group: '', version: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { group: parts[0], version: parts[1] };
  return undefined;
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'garbage-collector',
  create(_options, host) {
    const nodes = new Map<string, Node>();
    /** Owner uid → uids of the objects that reference it (the owner itself may be absent). */
    const dependents = new Map<string, Set<string>>();
    /** group + kind → served types of that kind, for resolving owner references. */
    const kinds = new Map<string, TypeDef[]>();
    const unknownKinds = new Set<string>();

    const pending = new Set<string>();
    const processing = new Set<string>();
    const dirty = new Set<string>();
    const failures = new Map<string, number>();
    const timers = new Set<NodeJS.Timeout>();
    const unwatches: (() => void)[] = [];
    let active = 0;
    let synced = false;
    let stopped = false;
    /** Events seen while the initial lists are read, replayed in order once they are in. */
    let buffered: { type: TypeDef; ev: Event; obj: KObject }[] | undefined = [];

    // ---------------------------------------------------------------- queue

    const enqueue = (key: string) => {
      if (stopped) return;
      if (processing.has(key)) { dirty.add(key); return; }
      pending.add(key);
      pump();
    };
    const attemptDelete = (uid: string) => enqueue(`d:${uid}`);
    const attemptOrphan = (uid: string) => enqueue(`o:${uid}`);

    function pump() {
      while (synced && !stopped && active < WORKERS && pending.size) {
        const key = pending.values().next().value as string;
        pending.delete(key);
        processing.add(key);
        active++;
        void run(key);
      }
    }

    async function run(key: string) {
      try {
        if (key.startsWith('d:')) await processDelete(key.slice(2));
        else await processOrphan(key.slice(2));
        failures.delete(key);
      } catch (e) {
        const n = (failures.get(key) ?? 0) + 1;
        failures.set(key, n);
        const delay = Math.min(RETRY_BASE_MS * 2 ** Math.min(n - 1, 20), RETRY_MAX_MS);
        // Losing write races (another collector, such as the reference controller manager's, writes the
        // same objects) is ordinary: quiet unless it goes on.
        const fields = { item: key, attempt: n, retryInMs: delay, error: String(e) };
        if (isConflict(e) && n <= QUIET_CONFLICTS) host.log.v(2, 'garbage collector: will retry', fields);
        else host.log.warn('garbage collector: will retry', fields);
        if (!stopped) {
          const t = setTimeout(() => { timers.delete(t); enqueue(key); }, delay);
          timers.add(t);
        }
      } finally {
        processing.delete(key);
        active--;
        if (dirty.delete(key)) pending.add(key);
        pump();
      }
    }

    // ---------------------------------------------------------------- graph

    const addEdge = (owner: string, dep: string) => {
      let s = dependents.get(owner);
      if (!s) dependents.set(owner, (s = new Set()));
      s.add(dep);
    };
    const removeEdge = (owner: string, dep: string) => {
      const s = dependents.get(owner);
      if (!s) return;
      s.delete(dep);
      if (!s.size) dependents.delete(owner);
    };

    /** An owner that is waiting on its dependents may be able to finish once one of them changes. */
    const nudgeOwner = (ownerUid: string) => {
      const o = nodes.get(ownerUid);
      if (o?.deletingDependents) attemptDelete(ownerUid);
    };

    /** Whether a reference from this node to an owner needs checking against the server. */
    const suspicious = (n: Node, ownerUid: string) => {
      const o = nodes.get(ownerUid);
      if (!o) return true;
      return o.type.namespaced && o.namespace !== n.namespace;
    };

    function observe(type: TypeDef, ev: Event, obj: KObject) {
      const md = obj?.metadata;
      const uid = md?.uid;
      if (typeof uid !== 'string' || !uid) return;
      const old = nodes.get(uid);

      if (ev === 'DELETED') {
        // An owner the graph never held (an object with no owners of its own, read at start) still
        // leaves its dependents without it.
        if (!old) { for (const dep of dependents.get(uid) ?? []) attemptDelete(dep); return; }
        nodes.delete(uid);
        for (const [owner] of old.owners) {
          removeEdge(owner, uid);
          nudgeOwner(owner);
        }
        // Its dependents may now have no owner left.
        for (const dep of dependents.get(uid) ?? []) attemptDelete(dep);
        return;
      }

      const finalizers = finalizersOf(obj);
      const beingDeleted = typeof md!.deletionTimestamp === 'string' && md!.deletionTimestamp !== '';
      const owners = new Map<string, boolean>();
      for (const r of ownerRefs(obj)) owners.set(r.uid, (owners.get(r.uid) ?? false) || r.blockOwnerDeletion === true);
      const n: Node = {
        uid, type, namespace: typeof md!.namespace === 'string' ? md!.namespace : '', name: typeof md!.name === 'string' ? md!.name : '',
        owners, beingDeleted,
        deletingDependents: beingDeleted && finalizers.includes(FOREGROUND),
        orphaning: beingDeleted && finalizers.includes(ORPHAN),
      };
      // Like the start-up scan (observeAll), the graph holds only objects with owners or being
      // deleted: a plain owner missing from it is looked up when a dependent is checked. Holding
      // every object cost ~400 bytes each (40 MiB at 100,000 objects).
      if (owners.size || beingDeleted) nodes.set(uid, n);
      else if (old) nodes.delete(uid);

      let check = false;
      for (const [owner, block] of old?.owners ?? []) {
        if (!owners.has(owner)) {
          removeEdge(owner, uid);
          nudgeOwner(owner);
        } else if (block && !owners.get(owner)) nudgeOwner(owner);
      }
      for (const [owner] of owners) {
        if (!old?.owners.has(owner)) {
          addEdge(owner, uid);
          if (suspicious(n, owner)) check = true;
        }
      }
      // A dependent that starts being deleted may unblock owners waiting for it.
      if (n.beingDeleted && !old?.beingDeleted) for (const [owner] of owners) nudgeOwner(owner);
      if (check && synced && !n.beingDeleted) attemptDelete(uid);
      if (n.deletingDependents && !old?.deletingDependents) {
        for (const dep of dependents.get(uid) ?? []) attemptDelete(dep);
        attemptDelete(uid);
      }
      if (n.orphaning) attemptOrphan(uid);
    }

    const onEvent = (type: TypeDef) => (ev: Event, obj: KObject) => {
      if (stopped) return;
      if (buffered) { buffered.push({ type, ev, obj }); return; }
      try {
        observe(type, ev, obj);
      } catch (e) {
        host.log.warn('garbage collector: ignoring event', { error: String(e) });
      }
    };

    // ---------------------------------------------------------------- owner lookup

    function resolveKind(ref: OwnerRef): TypeDef | undefined {
      const gv = splitApiVersion(ref.apiVersion);
      if (!gv || !ref.kind) return undefined;
      const candidates = kinds.get(`${gv.group}\0${ref.kind}`);
      if (!candidates?.length) return undefined;
      return candidates.find((t) => t.version === gv.version) ?? candidates[0];
    }

    type OwnerState = 'solid' | 'dangling' | 'waiting';

    async function ownerState(dep: Node, ref: OwnerRef): Promise<OwnerState> {
      const type = resolveKind(ref);
      if (!type) {
        // An owner of a kind this server does not serve cannot be checked: leave the dependent alone.
        const k = `${ref.apiVersion}/${ref.kind}`;
        if (!unknownKinds.has(k)) {
          unknownKinds.add(k);
          host.log.warn('garbage collector: owner kind not served, not collecting its dependents', { apiVersion: ref.apiVersion, kind: ref.kind });
        }
        return 'solid';
      }
      // A cluster-scoped object cannot be owned by a namespaced one: such a reference counts as absent.
      if (type.namespaced && !dep.namespace) return 'dangling';
      if (!ref.name) return 'dangling';
      const owner = await host.objects.get(type, type.namespaced ? dep.namespace : '', ref.name);
      if (!owner || owner.metadata?.uid !== ref.uid) return 'dangling';
      if (owner.metadata?.deletionTimestamp && finalizersOf(owner).includes(FOREGROUND)) return 'waiting';
      return 'solid';
    }

    /**
     * Read-modify-write of one object: `change` edits a fresh copy and says whether it changed
     * anything. Conflicts re-read and retry. Returns false when the object (by uid) is gone.
     */
    async function mutate(n: Pick<Node, 'type' | 'namespace' | 'name' | 'uid'>, change: (obj: KObject) => boolean): Promise<boolean> {
      for (let attempt = 1; ; attempt++) {
        const obj = await host.objects.get(n.type, n.namespace, n.name);
        if (!obj || obj.metadata?.uid !== n.uid) return false;
        if (!change(obj)) return true;
        try {
          await host.objects.update(n.type, obj);
          return true;
        } catch (e) {
          if (isConflict(e) && attempt < CONFLICT_ATTEMPTS) continue;
          if (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 404) return false;
          throw e;
        }
      }
    }

    const removeRefs = (uids: Set<string>) => (obj: KObject) => {
      const refs = obj.metadata!.ownerReferences;
      if (!Array.isArray(refs)) return false;
      const kept = refs.filter((r) => !(typeof r === 'object' && r !== null && uids.has((r as { uid?: unknown }).uid as string)));
      if (kept.length === refs.length) return false;
      if (kept.length) obj.metadata!.ownerReferences = kept;
      else delete obj.metadata!.ownerReferences;
      return true;
    };

    const removeFinalizer = (name: string) => (obj: KObject) => {
      const f = obj.metadata!.finalizers;
      if (!Array.isArray(f) || !f.includes(name)) return false;
      obj.metadata!.finalizers = f.filter((x) => x !== name);
      return true;
    };

    async function deleteObject(n: Node, policy: 'Background' | 'Foreground' | 'Orphan') {
      // The uid precondition keeps a newer object of the same name safe.
      const opts: { propagationPolicy?: string; preconditions?: { uid: string } } = { propagationPolicy: policy, preconditions: { uid: n.uid } };
      try {
        await host.objects.delete(n.type, n.namespace, n.name, opts);
      } catch (e) {
        if (isConflict(e)) return; // replaced by another object of the same name: its own events follow
        throw e;
      }
    }

    // ---------------------------------------------------------------- work items

    /** An owner in foreground deletion: delete its dependents; drop the finalizer once none block it. */
    async function processDeletingDependents(n: Node) {
      let blocking = 0;
      for (const depUid of dependents.get(n.uid) ?? []) {
        const dep = nodes.get(depUid);
        if (!dep) continue;
        if (dep.owners.get(n.uid)) blocking++;
        if (!dep.beingDeleted) attemptDelete(depUid);
      }
      if (blocking > 0) return;
      await mutate(n, removeFinalizer(FOREGROUND));
    }

    async function processDelete(uid: string) {
      const n = nodes.get(uid);
      if (!n) return;
      const obj = await host.objects.get(n.type, n.namespace, n.name);
      if (!obj || obj.metadata?.uid !== uid) return; // gone: its DELETED event does the rest
      if (obj.metadata?.deletionTimestamp) {
        if (finalizersOf(obj).includes(FOREGROUND)) await processDeletingDependents(n);
        return; // otherwise already on its way out
      }
      const refs = ownerRefs(obj);
      if (!refs.length) return;
      const solid: OwnerRef[] = [];
      const dangling: OwnerRef[] = [];
      const waiting: OwnerRef[] = [];
      for (const ref of refs) {
        const s = await ownerState(n, ref);
        (s === 'solid' ? solid : s === 'dangling' ? dangling : waiting).push(ref);
      }
      if (solid.length) {
        // Another owner still holds it: only let go of the absent owners and those being deleted in foreground.
        if (dangling.length || waiting.length) await mutate(n, removeRefs(new Set([...dangling, ...waiting].map((r) => r.uid))));
        return;
      }
      if (waiting.length) {
        // A dependent of its own also waiting on its dependents could close a cycle: stop blocking the owners.
        const own = dependents.get(uid);
        if (own && [...own].some((d) => nodes.get(d)?.deletingDependents)) {
          const waitingUids = new Set(waiting.map((r) => r.uid));
          await mutate(n, (o) => {
            let changed = false;
            for (const r of Array.isArray(o.metadata!.ownerReferences) ? o.metadata!.ownerReferences : []) {
              const ref = r as Record<string, unknown>;
              if (typeof ref === 'object' && ref !== null && waitingUids.has(ref.uid as string) && ref.blockOwnerDeletion === true) {
                ref.blockOwnerDeletion = false;
                changed = true;
              }
            }
            return changed;
          });
        }
        await deleteObject(n, 'Foreground');
        return;
      }
      const fin = finalizersOf(obj);
      await deleteObject(n, fin.includes(ORPHAN) ? 'Orphan' : fin.includes(FOREGROUND) ? 'Foreground' : 'Background');
    }

    /** An owner in orphan deletion: remove references to it from every dependent, then the finalizer. */
    async function processOrphan(uid: string) {
      const n = nodes.get(uid);
      if (!n) return;
      const obj = await host.objects.get(n.type, n.namespace, n.name);
      if (!obj || obj.metadata?.uid !== uid) return;
      if (!obj.metadata?.deletionTimestamp || !finalizersOf(obj).includes(ORPHAN)) return;
      const only = new Set([uid]);
      for (const depUid of [...(dependents.get(uid) ?? [])]) {
        const dep = nodes.get(depUid);
        if (dep) await mutate(dep, removeRefs(only));
      }
      await mutate(n, removeFinalizer(ORPHAN));
    }

    // ---------------------------------------------------------------- lifecycle

    /** Takes in the served types it does not know yet; returns one type per new storage prefix (to watch and list). */
    const seenPrefixes = new Set<string>();
    const seenTypes = new Set<TypeDef>();
    function track(): TypeDef[] {
      const fresh: TypeDef[] = [];
      for (const t of host.allTypes()) {
        if (seenTypes.has(t)) continue;
        seenTypes.add(t);
        const k = `${t.group}\0${t.kind}`;
        kinds.set(k, [...(kinds.get(k) ?? []).filter((x) => x.version !== t.version), t]);
        // Versions of one resource share storage: watch and list each store once.
        const p = storagePrefix(t);
        if (seenPrefixes.has(p)) continue;
        seenPrefixes.add(p);
        fresh.push(t);
      }
      return fresh;
    }

    async function observeAll(t: TypeDef) {
      if (host.objects.scan) {
        // The graph needs the objects that have owners or are being deleted (finalizers matter only
        // then); an owner missing from it is looked up when a dependent is checked (ownerState), so
        // the many objects with neither are not even parsed.
        host.objects.scan(t, (o) => {
          if (!o.mentions('"ownerReferences"', '"deletionTimestamp"')) return;
          try { observe(t, 'ADDED', o.object()); } catch { /* malformed object: skip */ }
        });
        return;
      }
      let objs: KObject[] = [];
      try { objs = await host.objects.list(t); } catch (e) { host.log.warn('garbage collector: cannot list', { resource: t.resource, error: String(e) }); }
      for (const o of objs) {
        try { observe(t, 'ADDED', o); } catch { /* malformed object: skip */ }
      }
    }

    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        stopped = false;
        const types = track();
        for (const t of types) unwatches.push(host.objects.watch(t, onEvent(t)));
        for (const t of types) await observeAll(t);
        // Types served later (custom resources) join the graph as they appear.
        host.onTypesChanged(() => {
          const added = track();
          for (const t of added) unwatches.push(host.objects.watch(t, onEvent(t)));
          void Promise.all(added.map(observeAll)).then(() => pump());
        });
        const replay = buffered ?? [];
        buffered = undefined;
        for (const { type, ev, obj } of replay) {
          try { observe(type, ev, obj); } catch { /* skip */ }
        }
        // With the whole graph in, check the references to owners it does not hold (or holds elsewhere).
        for (const n of nodes.values()) {
          if (n.beingDeleted) continue;
          for (const [owner] of n.owners) {
            if (suspicious(n, owner)) { attemptDelete(n.uid); break; }
          }
        }
        synced = true;
        pump();
      },
      ready() {
        return synced;
      },
      stop() {
        stopped = true;
        for (const u of unwatches.splice(0)) u();
        for (const t of timers) clearTimeout(t);
        timers.clear();
        pending.clear();
        dirty.clear();
      },
    };
  },
};
export default plugin;
