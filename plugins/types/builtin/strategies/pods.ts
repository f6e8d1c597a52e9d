// The Pod strategy: graceful deletion, pods/binding (and the legacy `bindings` resource) and
// pods/eviction honouring PodDisruptionBudgets, as the reference's pod registry does.
import type { KObject, PluginHost, TypeDef, TypeStrategy, VirtualHandler } from '../../../../kernel/contracts/index.js';
import { StatusError } from '../../../../kernel/contracts/status.js';
import { isObj, list, type J } from '../../../lib/json.js';
import { selectorMatches } from '../../../lib/label-selector.js';
import { isPodReady } from '../../../lib/workload.js';

const DEFAULT_GRACE_SECONDS = 30;
const RETRIES = 8;
/** The reference's cap on PDB status.disruptedPods before refusing evictions. */
const MAX_DISRUPTED_PODS = 2000;

const isConflict = (e: unknown) => e instanceof StatusError && e.code === 409;
const success = (): KObject => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });

export { isPodReady };

/**
 * Graceful deletion: a pod bound to a node lingers for its grace period (DeleteOptions, else
 * spec.terminationGracePeriodSeconds, else 30s) until its node agent deletes it with grace 0.
 * Unscheduled and finished pods go at once; so do pods of a node that does not exist, which the
 * reference's pod garbage collector would force-delete (no node agent will ever come for them).
 */
export function podStrategy(host: PluginHost): TypeStrategy {
  return {
    async gracePeriod(pod, requested) {
      const spec: J = isObj(pod.spec) ? pod.spec : {};
      const phase = (pod.status as J | undefined)?.phase;
      if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
      const grace = requested ?? (typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : DEFAULT_GRACE_SECONDS);
      if (grace <= 0) return 0;
      const nodes = host.type('', 'nodes');
      if (nodes && !(await host.objects.get(nodes, '', spec.nodeName))) return 0;
      return grace;
    },
  };
}

/**
 * Sets spec.nodeName once, the binding's annotations and PodScheduled=True in one write, as the
 * reference's binding does (a watcher never sees a bound pod that is not yet scheduled); a second
 * binding is a conflict.
 */
async function bind(host: PluginHost, pods: TypeDef, namespace: string, podName: string, body: KObject, dryRun: boolean): Promise<void> {
  const target: J = isObj(body.target) ? body.target : {};
  const causes = [];
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') causes.push({ reason: 'FieldValueNotSupported', field: 'target.kind', message: `Unsupported value: ${JSON.stringify(target.kind)}: supported values: "Node"` });
  if (!target.name) causes.push({ reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' });
  if (causes.length) throw host.errors.invalid('Binding', podName, causes);
  const conflict = (msg: string) => new StatusError(409, 'Conflict', `Operation cannot be fulfilled on pods/binding "${podName}": ${msg}`, { name: podName, kind: 'pods/binding' });
  for (let attempt = 0; ; attempt++) {
    const pod = await host.objects.get(pods, namespace, podName);
    if (!pod) throw new StatusError(404, 'NotFound', `pods "${podName}" not found`, { name: podName, kind: 'pods' });
    const uid = body.metadata?.uid;
    if (uid && uid !== pod.metadata?.uid) throw conflict(`Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.metadata?.uid}`);
    if (pod.metadata?.deletionTimestamp) throw conflict(`pod ${podName} is being deleted, cannot be assigned to a host`);
    const spec = pod.spec as J;
    if (spec.nodeName) throw conflict(`pod ${podName} is already assigned to node ${JSON.stringify(spec.nodeName)}`);
    if (list(spec.schedulingGates).length) throw conflict(`pod ${podName} has non-empty .spec.schedulingGates`);
    if (dryRun) return;
    spec.nodeName = target.name;
    const ann = body.metadata?.annotations;
    if (ann && Object.keys(ann).length) pod.metadata!.annotations = { ...pod.metadata!.annotations, ...ann };
    setScheduled(pod);
    try {
      // the binding sub-resource writes these fields only (subresourceFields), which pod updates may not
      await host.objects.update(pods, pod, 'binding');
      return;
    } catch (e) {
      if (!isConflict(e) || attempt >= RETRIES) throw e;
      await newerThan(host, pods, namespace, podName, pod.metadata?.resourceVersion);
    }
  }
}

/** The object once the cache holds a version other than `rv` (a conflict means a newer one is on its way). */
async function newerThan(host: PluginHost, type: TypeDef, namespace: string, name: string, rv: string | undefined): Promise<KObject | undefined> {
  for (let i = 0; i < 100; i++) {
    const o = await host.objects.get(type, namespace, name);
    if (!o || o.metadata?.resourceVersion !== rv) return o;
    await new Promise((r) => setTimeout(r, 10));
  }
  return host.objects.get(type, namespace, name);
}

/** PodScheduled=True, in place of the condition there was (its transition time kept if it was True already), as the reference's UpdatePodCondition. */
function setScheduled(pod: KObject): void {
  const status: J = isObj(pod.status) ? pod.status : (pod.status = {});
  const conds = list(status.conditions);
  const i = conds.findIndex((c) => c.type === 'PodScheduled');
  const now = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const cond = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: conds[i]?.status === 'True' ? conds[i].lastTransitionTime : now };
  status.conditions = i < 0 ? [...conds, cond] : conds.map((c, k) => (k === i ? cond : c));
}

/** pods/binding, the legacy namespaced `bindings` resource (name = the pod's), and pods/eviction. */
export function podHandlers(host: PluginHost) {
  const pods = () => host.type('', 'pods')!;
  const binding: VirtualHandler = async (req) => {
    const name = req.body.metadata?.name;
    if (name !== req.name) throw new StatusError(400, 'BadRequest', 'name in URL does not match name in Binding object');
    await bind(host, pods(), req.namespace, req.name, req.body, req.dryRun);
    return { code: 201, object: success() };
  };
  const legacyBinding: VirtualHandler = async (req) => {
    const name = req.body.metadata?.name;
    if (!name) throw host.errors.invalid('Binding', '', [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }]);
    await bind(host, pods(), req.namespace, name, req.body, req.dryRun);
    return { code: 201, object: success() };
  };
  const eviction: VirtualHandler = async (req) => {
    if (req.body.metadata?.name !== req.name) throw new StatusError(400, 'BadRequest', 'name in URL does not match name in Eviction object');
    const options: J = isObj(req.body.deleteOptions) ? { ...req.body.deleteOptions } : {};
    const dryRunBody = Array.isArray(options.dryRun) ? options.dryRun : [];
    if (req.dryRun && dryRunBody.length && !dryRunBody.includes('All')) throw new StatusError(400, 'BadRequest', `Non-matching dry-run options in request and content: [All] and [${dryRunBody.join(' ')}]`);
    const dryRun = req.dryRun || dryRunBody.includes('All');
    if (dryRun) options.dryRun = ['All'];
    const out = await evict(host, req.namespace, req.name, options, dryRun);
    return { code: typeof out.code === 'number' ? out.code : 201, object: out };
  };
  return { binding, legacyBinding, eviction };
}

async function evict(host: PluginHost, namespace: string, name: string, options: J, dryRun: boolean): Promise<KObject> {
  const pods = host.type('', 'pods')!;
  const pdbType = host.type('policy', 'poddisruptionbudgets');
  const notFound = () => new StatusError(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
  const del = async (opts: J) => {
    if (!(await host.objects.delete(pods, namespace, name, opts))) throw notFound();
  };
  const pod = await host.objects.get(pods, namespace, name);
  if (!pod) throw notFound();
  const phase = (pod.status as J | undefined)?.phase;
  // Finished, pending and already-deleting pods disrupt nothing more: no budget is consulted.
  if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata?.deletionTimestamp) {
    await del(options);
    return success();
  }
  const labels = pod.metadata?.labels ?? {};
  const budgets = pdbType ? (await host.objects.list(pdbType, namespace)).filter((b) => {
    const sel = (b.spec as J | undefined)?.selector;
    // An empty or missing selector matches nothing here, not everything.
    return isObj(sel) && (Object.keys(sel.matchLabels ?? {}).length || list(sel.matchExpressions).length) && selectorMatches(sel, labels);
  }) : [];
  if (budgets.length > 1) return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', code: 500 };
  const guarded = { ...options, preconditions: { ...(isObj(options.preconditions) ? options.preconditions : {}), resourceVersion: options.preconditions?.resourceVersion ?? pod.metadata?.resourceVersion } };
  if (!budgets.length) {
    await del(options);
    return success();
  }
  let pdb = budgets[0];
  const pdbName = pdb.metadata!.name!;
  const tooMany = (cause: string) => {
    const e = new StatusError(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", { causes: [{ reason: 'DisruptionBudget', message: cause }] });
    return e;
  };
  const st = (): J => (isObj(pdb.status) ? pdb.status : {});
  if (!isPodReady(pod)) {
    // An unhealthy pod counts for nothing: evicting it is allowed when the policy says so or the budget is met.
    const policy = (pdb.spec as J | undefined)?.unhealthyPodEvictionPolicy;
    if (policy === 'AlwaysAllow' || ((st().currentHealthy ?? 0) >= (st().desiredHealthy ?? 0) && (st().desiredHealthy ?? 0) > 0)) {
      try {
        await del(guarded);
      } catch (e) {
        if (isConflict(e) && !options.preconditions?.resourceVersion) throw tooMany(`The disruption budget ${pdbName} is still being processed by the server.`);
        throw e;
      }
      return success();
    }
  }
  for (let attempt = 0; ; attempt++) {
    const s = st();
    if ((s.observedGeneration ?? 0) < (pdb.metadata?.generation ?? 0)) throw tooMany(`The disruption budget ${pdbName} is still being processed by the server.`);
    if ((s.disruptionsAllowed ?? 0) < 0) throw new StatusError(403, 'Forbidden', `poddisruptionbudget.policy "${pdbName}" is forbidden: pdb disruptions allowed is negative`, { name: pdbName, group: 'policy', kind: 'poddisruptionbudget' });
    if (Object.keys(s.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) throw new StatusError(403, 'Forbidden', `poddisruptionbudget.policy "${pdbName}" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`, { name: pdbName, group: 'policy', kind: 'poddisruptionbudget' });
    if ((s.disruptionsAllowed ?? 0) === 0) throw tooMany(`The disruption budget ${pdbName} needs ${s.desiredHealthy ?? 0} healthy pods and has ${s.currentHealthy ?? 0} currently`);
    if (dryRun) break;
    const next = JSON.parse(JSON.stringify(pdb)) as KObject;
    const ns: J = (next.status ??= {}) as J;
    ns.disruptionsAllowed = s.disruptionsAllowed - 1;
    ns.disruptedPods = { ...(ns.disruptedPods ?? {}), [name]: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z') };
    if (ns.disruptionsAllowed === 0) {
      const conds = list(ns.conditions).filter((c) => c.type !== 'DisruptionAllowed');
      const prev = list(ns.conditions).find((c) => c.type === 'DisruptionAllowed');
      ns.conditions = [...conds, { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', observedGeneration: pdb.metadata?.generation, lastTransitionTime: prev?.status === 'False' ? prev.lastTransitionTime : ns.disruptedPods[name] }];
    }
    try {
      await host.objects.update(pdbType!, next, 'status');
      break;
    } catch (e) {
      if (!isConflict(e)) throw e;
      if (attempt >= RETRIES) throw new StatusError(504, 'Timeout', `couldn't update PodDisruptionBudget "${pdbName}" due to conflicts`, { retryAfterSeconds: 10 });
      const fresh = await newerThan(host, pdbType!, namespace, pdbName, pdb.metadata?.resourceVersion);
      if (!fresh) break;
      pdb = fresh;
    }
  }
  await del(options);
  return success();
}
