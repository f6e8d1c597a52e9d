// The deployment controller: one ReplicaSet per pod template (named <deployment>-<hash>, labelled
// pod-template-hash), rolled over by the RollingUpdate (maxSurge / maxUnavailable) or Recreate
// strategy, with the reference's revision annotations, status counts and Available / Progressing
// conditions, paused deployments only scaled, and old ReplicaSets beyond revisionHistoryLimit deleted.
import { CONTRACT_VERSION, type KObject, type PluginHost, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { canonical, claim, controllerOf, controllerQueue, controllerRef, fnv32, isConflict, isNotFound, nowTime, safeEncode, scaledValue, selectorOf, writeStatus } from '../../lib/workload.js';

export const HASH_LABEL = 'pod-template-hash';
/**
 * The pod-template-hash of a template: FNV-1a (32 bits) of the template, then of the collision count
 * (8 bytes, little-endian) when there is one, spelt in the reference's vowel-free alphabet. The
 * reference hashes its Go dump of the structure instead of JSON, so the values differ from
 * kube-controller-manager's; they are stable and of the same shape.
 */
export function templateHash(template: J, collisionCount?: number): string {
  const extra = Buffer.alloc(collisionCount === undefined ? 0 : 8);
  if (collisionCount !== undefined) extra.writeUInt32LE(collisionCount >>> 0, 0);
  return safeEncode(fnv32(Buffer.concat([Buffer.from(canonical(template)), extra]), true));
}

/** Templates equal but for the pod-template-hash label. */
function sameTemplate(a: J, b: J): boolean {
  const strip = (t: J) => {
    const labels = { ...(t?.metadata?.labels ?? {}) };
    delete labels[HASH_LABEL];
    return canonical({ ...t, metadata: { ...(t?.metadata ?? {}), labels } });
  };
  return strip(a) === strip(b);
}

const replicasOf = (rs: KObject) => Number((rs.spec as J | undefined)?.replicas ?? 0);
const st = (rs: KObject, f: string) => Number((rs.status as J | undefined)?.[f] ?? 0);
const created = (o: KObject) => Date.parse(o.metadata?.creationTimestamp ?? '') || 0;
const oldestFirst = (a: KObject, b: KObject) => created(a) - created(b) || a.metadata!.name!.localeCompare(b.metadata!.name!);
const sum = (rss: KObject[], f: (rs: KObject) => number) => rss.reduce((n, rs) => n + f(rs), 0);

interface Condition { type: string; status: string; lastUpdateTime: string; lastTransitionTime: string; reason: string; message: string }

/** Sets a condition as the reference's SetDeploymentCondition does: same status and reason leaves it be; same status keeps the transition time. */
function setCondition(status: J, c: Omit<Condition, 'lastUpdateTime' | 'lastTransitionTime'>, force = false): void {
  const conds = list(status.conditions) as Condition[];
  const cur = conds.find((x) => x.type === c.type);
  if (!force && cur && cur.status === c.status && cur.reason === c.reason) return;
  const t = nowTime();
  const next: Condition = { type: c.type, status: c.status, lastUpdateTime: t, lastTransitionTime: cur && cur.status === c.status ? cur.lastTransitionTime : t, reason: c.reason, message: c.message };
  status.conditions = [...conds.filter((x) => x.type !== c.type), next];
}

const condition = (status: J, type: string) => (list(status.conditions) as Condition[]).find((c) => c.type === type);

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'deployment',
  create(_options, host: PluginHost) {
    const kd = host.brand.keyDomain;
    const REVISION = `deployment.${kd}/revision`;
    const REVISION_HISTORY = `deployment.${kd}/revision-history`;
    const DESIRED = `deployment.${kd}/desired-replicas`;
    const MAX = `deployment.${kd}/max-replicas`;
    const NOT_COPIED = new Set([host.brand.lastAppliedAnnotation, REVISION, REVISION_HISTORY, DESIRED, MAX, `deprecated.deployment.rollback.to`]);
    let dType: TypeDef, rsType: TypeDef, podType: TypeDef;
    const unwatch: (() => void)[] = [];

    // Revisions are int64 in the reference: upstream's e2e adopts a ReplicaSet at revision 3546343826724305833.
    const revisionOf = (rs: KObject): bigint => { try { return BigInt(rs.metadata?.annotations?.[REVISION] ?? 0); } catch { return 0n; } };
    const byRevision = (a: KObject, b: KObject) => { const x = revisionOf(a); const y = revisionOf(b); return x < y ? -1 : x > y ? 1 : 0; };

    /** The deployment's view of one sync: the objects read and the status being built. */
    interface Ctx { d: KObject; spec: J; replicas: number; rolling: boolean; maxSurge: number; maxUnavailable: number; status: J; requeueMs?: number }

    function fenceposts(spec: J, replicas: number): { maxSurge: number; maxUnavailable: number } {
      const ru: J = spec.strategy?.rollingUpdate ?? {};
      const maxSurge = scaledValue(ru.maxSurge ?? 0, replicas, true);
      let maxUnavailable = scaledValue(ru.maxUnavailable ?? 0, replicas, false);
      // both rounding to zero would stall a rollout: the reference allows one unavailable then
      if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
      return { maxSurge, maxUnavailable: Math.min(maxUnavailable, replicas) };
    }

    /** Sets a ReplicaSet's size and the desired/max annotations that record the deployment's size at the time. */
    async function scaleRS(c: Ctx, rs: KObject, size: number): Promise<KObject> {
      const ann = { ...(rs.metadata?.annotations ?? {}) } as Record<string, string>;
      const desired = String(c.replicas);
      const max = String(c.replicas + (c.rolling ? c.maxSurge : 0));
      if (replicasOf(rs) === size && ann[DESIRED] === desired && ann[MAX] === max) return rs;
      ann[DESIRED] = desired;
      ann[MAX] = max;
      return host.objects.update(rsType, { ...rs, metadata: { ...rs.metadata!, annotations: ann }, spec: { ...(rs.spec as J), replicas: size } });
    }

    /** Finds the ReplicaSet of the current template, bringing its annotations up to date, or creates it when `create`. */
    async function newReplicaSet(c: Ctx, owned: KObject[], create: boolean): Promise<KObject | undefined> {
      const { d, spec } = c;
      const existing = owned.filter((rs) => sameTemplate((rs.spec as J)?.template ?? {}, spec.template ?? {})).sort(oldestFirst)[0];
      const revision = String(owned.filter((rs) => rs !== existing).map(revisionOf).reduce((m, r) => (r > m ? r : m), 0n) + 1n);
      if (existing) {
        const ann = { ...(existing.metadata?.annotations ?? {}) } as Record<string, string>;
        copyAnnotations(d, ann);
        if (revisionOf(existing) < BigInt(revision)) {
          // rolled back to this template: remember the revisions it had
          if (ann[REVISION]) ann[REVISION_HISTORY] = ann[REVISION_HISTORY] ? `${ann[REVISION_HISTORY]},${ann[REVISION]}` : ann[REVISION];
          ann[REVISION] = revision;
        }
        const minReady = spec.minReadySeconds ?? 0;
        let rs = existing;
        if (canonical(ann) !== canonical(existing.metadata?.annotations ?? {}) || ((existing.spec as J).minReadySeconds ?? 0) !== minReady) {
          rs = await host.objects.update(rsType, { ...existing, metadata: { ...existing.metadata!, annotations: ann }, spec: { ...(existing.spec as J), minReadySeconds: minReady } });
        }
        if (spec.progressDeadlineSeconds !== undefined && !condition(c.status, 'Progressing')) {
          setCondition(c.status, { type: 'Progressing', status: 'True', reason: 'FoundNewReplicaSet', message: `Found new replica set "${rs.metadata!.name}"` });
        }
        return rs;
      }
      if (!create) return undefined;
      const collisionCount = (d.status as J | undefined)?.collisionCount as number | undefined;
      const hash = templateHash(spec.template ?? {}, collisionCount);
      const template = JSON.parse(JSON.stringify(spec.template ?? {})) as J;
      template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [HASH_LABEL]: hash } };
      const selector = { ...(spec.selector ?? {}), matchLabels: { ...(spec.selector?.matchLabels ?? {}), [HASH_LABEL]: hash } };
      const name = `${d.metadata!.name}-${hash}`;
      const size = c.rolling ? Math.min(c.replicas, Math.max(0, c.replicas + c.maxSurge - sum(owned, replicasOf))) : c.replicas;
      const annotations: Record<string, string> = {};
      copyAnnotations(d, annotations);
      Object.assign(annotations, { [REVISION]: revision, [DESIRED]: String(c.replicas), [MAX]: String(c.replicas + (c.rolling ? c.maxSurge : 0)) });
      const body: KObject = {
        apiVersion: 'apps/v1', kind: 'ReplicaSet',
        metadata: { name, namespace: d.metadata!.namespace, labels: template.metadata.labels, annotations, ownerReferences: [controllerRef(d)] },
        spec: { replicas: size, minReadySeconds: spec.minReadySeconds ?? 0, selector, template },
      };
      try {
        const rs = await host.objects.create(rsType, body);
        if (spec.progressDeadlineSeconds !== undefined) setCondition(c.status, { type: 'Progressing', status: 'True', reason: 'NewReplicaSetCreated', message: `Created new replica set "${name}"` });
        return rs;
      } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
        const other = await host.objects.get(rsType, d.metadata!.namespace!, name);
        if (other && controllerOf(other)?.uid === d.metadata!.uid && sameTemplate((other.spec as J).template ?? {}, spec.template ?? {})) return other;
        // a different ReplicaSet has the name: count the collision, which changes the hash next time
        c.status.collisionCount = (collisionCount ?? 0) + 1;
        c.requeueMs = 0;
        return undefined;
      }
    }

    function copyAnnotations(d: KObject, into: Record<string, string>): void {
      for (const [k, v] of Object.entries((d.metadata?.annotations ?? {}) as Record<string, string>)) if (!NOT_COPIED.has(k)) into[k] = v;
    }

    /** A size change of the deployment (not a new template): the reference's isScalingEvent. */
    function isScalingEvent(c: Ctx, owned: KObject[]): boolean {
      return owned.some((rs) => replicasOf(rs) > 0 && rs.metadata?.annotations?.[DESIRED] !== undefined && rs.metadata.annotations[DESIRED] !== String(c.replicas));
    }

    /**
     * Scaling without rolling out (a paused deployment, a size change): one active ReplicaSet takes
     * the whole size; several share the change in proportion to their size against the size each
     * was last scaled for (its max-replicas annotation), the leftover to the largest: the reference's
     * proportional scaling (larger first; on a tie, the newer when adding, the older when removing).
     */
    async function scaleOnly(c: Ctx, newRS: KObject | undefined, old: KObject[]): Promise<void> {
      const all = [...old, ...(newRS ? [newRS] : [])].sort(oldestFirst);
      const active = all.filter((rs) => replicasOf(rs) > 0);
      const size = new Map(active.map((rs) => [rs, replicasOf(rs)]));
      if (active.length <= 1) {
        const target = newRS ?? active[0] ?? [...old].sort((a, b) => byRevision(b, a))[0];
        for (const rs of active) size.set(rs, 0);
        if (target) size.set(target, c.replicas);
      } else {
        const allowed = c.replicas + (c.rolling ? c.maxSurge : 0);
        const toAdd = allowed - sum(active, replicasOf);
        const created = (rs: KObject) => Date.parse(rs.metadata?.creationTimestamp ?? '') || 0;
        const sorted = [...active].sort((a, b) => replicasOf(b) - replicasOf(a) || (toAdd > 0 ? created(b) - created(a) : created(a) - created(b)));
        let added = 0;
        for (const rs of sorted) {
          const n = replicasOf(rs);
          if (!toAdd || added === toAdd) continue;
          // the reference's getReplicaSetFraction: the size it would have, scaled as the deployment was
          const annotated = Number(rs.metadata?.annotations?.[MAX]) || Number(st(c.d, 'replicas')) || n;
          const fraction = c.replicas === 0 ? -n : Math.round((n * allowed) / annotated) - n;
          const left = toAdd - added;
          const share = toAdd > 0 ? Math.min(fraction, left) : Math.max(fraction, left);
          size.set(rs, n + share);
          added += share;
        }
        if (toAdd && sorted.length) size.set(sorted[0], Math.max(0, size.get(sorted[0])! + toAdd - added));
      }
      // every active ReplicaSet gets the new desired-replicas annotation, or this stays a scaling event
      for (const [rs, n] of size) await scaleRS(c, rs, n);
    }

    /** RollingUpdate: grow the new ReplicaSet within maxSurge, shrink the old ones within maxUnavailable. Returns whether it scaled. */
    async function rollingStep(c: Ctx, newRS: KObject, old: KObject[]): Promise<boolean> {
      const all = () => [...old, newRS];
      // the new ReplicaSet first
      const cur = replicasOf(newRS);
      let want = cur;
      if (cur > c.replicas) want = c.replicas;
      else if (cur < c.replicas) want = cur + Math.max(0, Math.min(c.replicas + c.maxSurge - sum(all(), replicasOf), c.replicas - cur));
      if (want !== cur) { await scaleRS(c, newRS, want); return true; }
      if (!sum(old, replicasOf)) return false;
      // then the old ones, keeping replicas - maxUnavailable available
      const minAvailable = c.replicas - c.maxUnavailable;
      const newUnavailable = replicasOf(newRS) - st(newRS, 'availableReplicas');
      let budget = sum(all(), replicasOf) - minAvailable - newUnavailable;
      if (budget <= 0) return false;
      let scaled = false;
      old.sort(oldestFirst);
      // unhealthy old pods go first: they add nothing to availability
      for (let i = 0; i < old.length && budget > 0; i++) {
        const unhealthy = replicasOf(old[i]) - st(old[i], 'availableReplicas');
        if (replicasOf(old[i]) === 0 || unhealthy <= 0) continue;
        const n = Math.min(budget, unhealthy);
        old[i] = await scaleRS(c, old[i], replicasOf(old[i]) - n);
        budget -= n;
        scaled = true;
      }
      // then healthy ones, as far as availability above the minimum allows
      let spare = sum(all(), (rs) => st(rs, 'availableReplicas')) - minAvailable;
      for (let i = 0; i < old.length && spare > 0; i++) {
        if (replicasOf(old[i]) === 0) continue;
        const n = Math.min(replicasOf(old[i]), spare);
        old[i] = await scaleRS(c, old[i], replicasOf(old[i]) - n);
        spare -= n;
        scaled = true;
      }
      return scaled;
    }

    /** Recreate: every old pod gone before the new ReplicaSet gets any. Returns the new ReplicaSet once it may grow. */
    async function recreateStep(c: Ctx, owned: KObject[], newRS: KObject | undefined, old: KObject[]): Promise<KObject | undefined> {
      let scaledDown = false;
      for (const rs of old) if (replicasOf(rs) > 0) { await scaleRS(c, rs, 0); scaledDown = true; }
      if (scaledDown) return newRS;
      const oldUids = new Set(old.map((rs) => rs.metadata!.uid));
      const pods = await host.objects.list(podType, c.d.metadata!.namespace!);
      const running = pods.some((p) => oldUids.has(controllerOf(p)?.uid ?? '') && !['Succeeded', 'Failed'].includes((p.status as J | undefined)?.phase));
      if (running) return newRS;
      const rs = newRS ?? (await newReplicaSet(c, owned, true));
      if (rs && replicasOf(rs) !== c.replicas) return scaleRS(c, rs, c.replicas);
      return rs;
    }

    /** Deletes old ReplicaSets with nothing left in them beyond revisionHistoryLimit, lowest revision first. */
    async function cleanup(c: Ctx, old: KObject[]): Promise<void> {
      const limit = c.spec.revisionHistoryLimit;
      if (typeof limit !== 'number') return;
      const alive = old.filter((rs) => !rs.metadata?.deletionTimestamp).sort((a, b) => byRevision(a, b) || oldestFirst(a, b));
      for (const rs of alive.slice(0, Math.max(0, alive.length - limit))) {
        if (st(rs, 'replicas') || replicasOf(rs) || (rs.metadata?.generation ?? 0) > st(rs, 'observedGeneration')) continue;
        await host.objects.delete(rsType, rs.metadata!.namespace!, rs.metadata!.name!, { preconditions: { uid: rs.metadata!.uid! } }).catch((e) => { if (!isNotFound(e) && !isConflict(e)) throw e; });
      }
    }

    /** The counts and the Available condition from the ReplicaSets (the reference's calculateStatus). */
    function counts(c: Ctx, all: KObject[], newRS: KObject | undefined): void {
      const s = c.status;
      const available = sum(all, (rs) => st(rs, 'availableReplicas'));
      s.observedGeneration = c.d.metadata?.generation ?? 1;
      s.replicas = sum(all, (rs) => st(rs, 'replicas'));
      s.updatedReplicas = newRS ? st(newRS, 'replicas') : 0;
      s.readyReplicas = sum(all, (rs) => st(rs, 'readyReplicas'));
      s.availableReplicas = available;
      s.unavailableReplicas = Math.max(0, sum(all, replicasOf) - available);
      const minAvailable = c.replicas - (c.rolling && c.replicas ? c.maxUnavailable : 0);
      if (available >= minAvailable) setCondition(s, { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' });
      else setCondition(s, { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' });
      // zero counts are left out, as the reference's omitempty fields are
      for (const f of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas']) if (!s[f]) delete s[f];
    }

    /** The Progressing condition of a rollout (the reference's syncRolloutStatus). */
    function progress(c: Ctx, newRS: KObject | undefined): void {
      const { d, status: s, spec, replicas } = c;
      const deadline = spec.progressDeadlineSeconds;
      if (deadline === undefined) { s.conditions = list(s.conditions).filter((x) => x.type !== 'Progressing'); return; }
      const n = (o: J, f: string) => Number(o[f] ?? 0);
      const cur = condition(s, 'Progressing');
      if (n(s, 'replicas') === n(s, 'updatedReplicas') && cur?.reason === 'NewReplicaSetAvailable') return;
      const old: J = isObj(d.status) ? d.status : {};
      const what = newRS ? `ReplicaSet "${newRS.metadata!.name}"` : `Deployment "${d.metadata!.name}"`;
      if (n(s, 'updatedReplicas') === replicas && n(s, 'replicas') === replicas && n(s, 'availableReplicas') === replicas && s.observedGeneration >= (d.metadata?.generation ?? 1)) {
        setCondition(s, { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `${what} has successfully progressed.` });
      } else if (n(s, 'updatedReplicas') > n(old, 'updatedReplicas') || n(s, 'replicas') - n(s, 'updatedReplicas') < n(old, 'replicas') - n(old, 'updatedReplicas')
        || n(s, 'readyReplicas') > n(old, 'readyReplicas') || n(s, 'availableReplicas') > n(old, 'availableReplicas')) {
        // progress: a fresh lastUpdateTime, the transition time kept while it stays True
        setCondition(s, { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: `${what} is progressing.` }, true);
        const after = condition(s, 'Progressing')!;
        if (cur?.status === 'True') after.lastTransitionTime = cur.lastTransitionTime;
      } else if (cur && (cur.reason === 'ProgressDeadlineExceeded' || Date.parse(cur.lastUpdateTime) + deadline * 1000 < Date.now())) {
        setCondition(s, { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `${what} has timed out progressing.` });
      } else if (cur) {
        // look again when the deadline would pass without progress
        c.requeueMs = Math.max(0, Date.parse(cur.lastUpdateTime) + deadline * 1000 - Date.now()) + 1000;
      }
    }

    /** The paused condition the reference's checkPausedConditions keeps. */
    function pausedCondition(c: Ctx): void {
      if (c.spec.progressDeadlineSeconds === undefined) return;
      const cur = condition(c.status, 'Progressing');
      if (c.spec.paused && cur?.reason !== 'DeploymentPaused') setCondition(c.status, { type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' });
      else if (!c.spec.paused && cur?.reason === 'DeploymentPaused') setCondition(c.status, { type: 'Progressing', status: 'Unknown', reason: 'DeploymentResumed', message: 'Deployment is resumed' });
    }

    async function sync(key: string) {
      const [ns, name] = key.split('/');
      let d = await host.objects.get(dType, ns, name);
      if (!d) return;
      const spec: J = isObj(d.spec) ? d.spec : {};
      const replicas = Number(spec.replicas ?? 1);
      const c: Ctx = { d, spec, replicas, rolling: spec.strategy?.type !== 'Recreate', ...fenceposts(spec, replicas), status: JSON.parse(JSON.stringify(d.status ?? {})) };
      const owned = await claim(host, rsType, d, await host.objects.list(rsType, ns), selectorOf(spec.selector));
      const reread = async (rs: KObject | undefined) => (rs ? (await host.objects.get(rsType, ns, rs.metadata!.name!)) ?? rs : undefined);
      if (d.metadata?.deletionTimestamp) {
        counts(c, owned, owned.find((rs) => sameTemplate((rs.spec as J)?.template ?? {}, spec.template ?? {})));
        await writeStatus(host, dType, d, c.status);
        return;
      }
      pausedCondition(c);
      let newRS: KObject | undefined;
      const rollout = !spec.paused && !isScalingEvent(c, owned);
      if (!rollout) {
        newRS = await newReplicaSet(c, owned, false);
        const old = owned.filter((rs) => rs.metadata!.uid !== newRS?.metadata!.uid);
        await scaleOnly(c, newRS, old);
        if (spec.paused) await cleanup(c, old);
      } else if (c.rolling) {
        newRS = await newReplicaSet(c, owned, true);
        const old = owned.filter((rs) => rs.metadata!.uid !== newRS?.metadata!.uid);
        if (newRS && !(await rollingStep(c, newRS, old))) {
          const all = await Promise.all([...old, newRS].map(reread));
          counts(c, all as KObject[], newRS);
          if (['updatedReplicas', 'replicas', 'availableReplicas'].every((f) => Number(c.status[f] ?? 0) === replicas)) await cleanup(c, old);
        }
      } else {
        newRS = await newReplicaSet(c, owned, false);
        const old = owned.filter((rs) => rs.metadata!.uid !== newRS?.metadata!.uid);
        newRS = await recreateStep(c, owned, newRS, old);
        if (newRS && st(newRS, 'availableReplicas') === replicas && replicasOf(newRS) === replicas) await cleanup(c, old);
      }
      // the revision of the current template shows on the deployment too
      const rev = newRS?.metadata?.annotations?.[REVISION];
      if (rev && d.metadata?.annotations?.[REVISION] !== rev) {
        d = await host.objects.update(dType, { ...d, metadata: { ...d.metadata!, annotations: { ...(d.metadata?.annotations ?? {}), [REVISION]: rev } } });
      }
      const all = (await Promise.all((await host.objects.list(rsType, ns)).filter((rs) => controllerOf(rs)?.uid === d!.metadata!.uid).map(reread))) as KObject[];
      newRS = newRS && all.find((rs) => rs.metadata!.uid === newRS!.metadata!.uid);
      counts(c, all, newRS);
      if (rollout) progress(c, newRS);
      await writeStatus(host, dType, d, c.status);
      if (c.requeueMs !== undefined) queue.add(key, c.requeueMs);
    }

    const queue = controllerQueue(host, 'deployment', sync);

    /** A ReplicaSet's change concerns its deployment, or (an orphan) the deployments whose selector matches it. */
    async function rsChanged(rs: KObject) {
      const ns = rs.metadata!.namespace!;
      const ref = controllerOf(rs);
      if (ref) { if (ref.kind === 'Deployment') queue.add(`${ns}/${ref.name}`); return; }
      for (const d of await host.objects.list(dType, ns)) if (selectorOf((d.spec as J | undefined)?.selector)(rs.metadata?.labels ?? {})) queue.add(`${ns}/${d.metadata!.name}`);
    }

    /** A pod that goes lets a Recreate rollout move on. */
    async function podGone(pod: KObject) {
      const ref = controllerOf(pod);
      if (ref?.kind !== 'ReplicaSet') return;
      const rs = await host.objects.get(rsType, pod.metadata!.namespace!, ref.name);
      const up = rs && controllerOf(rs);
      if (up?.kind === 'Deployment') queue.add(`${pod.metadata!.namespace}/${up.name}`);
    }

    const warn = (e: unknown) => host.log.warn('deployment controller', { error: String(e) });
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        const t = [host.type('apps', 'deployments'), host.type('apps', 'replicasets'), host.type('', 'pods')];
        if (!t[0] || !t[1] || !t[2]) return;
        [dType, rsType, podType] = t as TypeDef[];
        unwatch.push(host.objects.watch(dType, (ev, o) => { if (ev !== 'DELETED') queue.add(`${o.metadata!.namespace}/${o.metadata!.name}`); }));
        unwatch.push(host.objects.watch(rsType, (_ev, o) => { rsChanged(o).catch(warn); }));
        unwatch.push(host.objects.watch(podType, (ev, o) => { if (ev === 'DELETED' || (o.status as J | undefined)?.phase === 'Succeeded' || (o.status as J | undefined)?.phase === 'Failed') podGone(o).catch(warn); }));
        for (const d of await host.objects.list(dType)) queue.add(`${d.metadata!.namespace}/${d.metadata!.name}`, 0);
      },
      async stop() {
        for (const u of unwatch) u();
        await queue.stop();
      },
    };
  },
};
export default plugin;
