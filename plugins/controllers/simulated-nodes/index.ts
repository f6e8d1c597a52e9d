// simulated-nodes: a whole cluster on one machine. Registers `count` nodes as node agents do and
// plays the node agent's part for the pods bound to them: no container runs, but each pod's status
// goes through what a real node agent writes (Running with addresses, Ready after any readiness
// delay, Succeeded or Failed for pods that run to completion, stopped and deleted at the end of a
// graceful deletion). Event-driven: pod and node watches, one timer per pod for what is due next.
import { hostPorts, portsClash } from '../../lib/host-ports.js';
import { CONTRACT_VERSION, type KObject, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { isObj, type J } from '../../lib/json.js';
import { WorkQueue } from '../../lib/work-queue.js';
import { NodeAgents, planNodes, type SimNode } from './nodes.js';
import { parseOptions } from './options.js';
import { PodAddresses } from './addresses.js';
import { recordPodEvents, type PodEvent } from './events.js';
import { isStarted, isTerminal, progress, runSettings, startedStatus, stoppedStatus } from './pod-status.js';

const keyOf = (o: KObject) => `${o.metadata!.namespace}/${o.metadata!.name}`;
const nodeNameOf = (o: KObject) => (isObj(o.spec) ? (o.spec.nodeName as string | undefined) : undefined);

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'simulated-nodes',
  create(options, host) {
    const o = parseOptions(options);
    const nodes = new Map<string, SimNode>(planNodes(o).map((n) => [n.name, n]));
    const agents = new NodeAgents(host, o, [...nodes.values()]);
    const addresses = new Map([...nodes.values()].map((n) => [n.name, new PodAddresses(n.podBase)]));
    const timers = new Map<string, NodeJS.Timeout>();
    const unwatch: (() => void)[] = [];
    let podType: TypeDef | undefined;
    const defaults = { runSeconds: o.podRunSeconds, exitCode: o.exitCode };
    /** Pods (by uid) whose Killing events are recorded: once per deletion. */
    const killing = new Set<string>();
    const record = (pod: KObject, node: string, what: PodEvent) => (o.events ? recordPodEvents(host, pod, node, what) : Promise.resolve());

    /** Wake the pod's sync at `at` (replacing any earlier timer), or never. */
    function wake(key: string, at?: number): void {
      clearTimeout(timers.get(key));
      timers.delete(key);
      if (at === undefined) return;
      // setTimeout fires at once past 2^31-1 ms: a far-off moment is looked at again in a day.
      const delay = Math.min(Math.max(0, at - Date.now()) + 5, 86_400_000);
      timers.set(key, setTimeout(() => { timers.delete(key); queue.add(key, 0); }, delay));
    }

    function release(pod: KObject): void {
      const node = nodeNameOf(pod);
      if (node) addresses.get(node)?.free(pod.metadata!.uid!);
    }

    async function writeStatus(pod: KObject, status: J): Promise<KObject> {
      return host.objects.update(podType!, { ...pod, status }, 'status');
    }

    /** Whether a pod started on `node` and not finished holds one of the pod's host ports. */
    async function hostPortTaken(pod: KObject, node: string): Promise<boolean> {
      const wanted = hostPorts(pod);
      if (!wanted.length) return false;
      const others = (await host.objects.list(podType!)).filter((p) => nodeNameOf(p) === node && p.metadata?.uid !== pod.metadata?.uid && isStarted(p) && !isTerminal(p));
      return others.some((p) => hostPorts(p).some((used) => wanted.some((w) => portsClash(w, used))));
    }

    /** One step of a pod's life on its node; a conflict (409) re-queues it and the next pass re-reads. */
    async function sync(key: string): Promise<void> {
      const [ns, name] = key.split('/');
      const pod = await host.objects.get(podType!, ns, name);
      const node = pod && nodeNameOf(pod);
      if (!pod || !node || !nodes.has(node)) return wake(key);
      const now = Date.now();
      const meta = pod.metadata!;
      if (meta.deletionTimestamp) {
        // The containers get the grace period (or stopSeconds, when shorter) to stop; then the pod goes.
        const end = Date.parse(meta.deletionTimestamp);
        const begun = end - (meta.deletionGracePeriodSeconds ?? 0) * 1000;
        const at = o.stopSeconds === undefined ? end : Math.min(end, begun + o.stopSeconds * 1000);
        if (isStarted(pod) && !isTerminal(pod) && !killing.has(meta.uid!)) {
          killing.add(meta.uid!);
          await record(pod, node, 'killing');
        }
        if (at > now) return wake(key, at);
        wake(key);
        const stopped = isTerminal(pod) || !isStarted(pod) ? pod : await writeStatus(pod, stoppedStatus(pod, now));
        release(pod);
        await host.objects.delete(podType!, ns, name, { gracePeriodSeconds: 0, preconditions: { uid: stopped.metadata!.uid } });
        return;
      }
      if (isTerminal(pod)) {
        release(pod);
        return wake(key);
      }
      if (!isStarted(pod)) {
        // A node agent's admission: a host port another pod on the node holds refuses the pod, as the
        // reference's kubelet rejects it (Failed; its controller makes another).
        if (await hostPortTaken(pod, node)) {
          await writeStatus(pod, { ...(isObj(pod.status) ? pod.status : {}), phase: 'Failed', reason: 'NodePorts', message: 'Pod was rejected: Predicate NodePorts failed' });
          return wake(key);
        }
        const sim = nodes.get(node)!;
        const hostNetwork = isObj(pod.spec) && pod.spec.hostNetwork === true;
        const podIP = hostNetwork ? sim.hostIP : addresses.get(node)!.take(meta.uid!);
        const started = await writeStatus(pod, startedStatus(pod, sim.hostIP, podIP, now, host.featureGates.PodHostIPs === true));
        await record(started, node, 'started');
        return step(key, started, Date.now());
      }
      return step(key, pod, now);
    }

    /** Apply what is due to a started pod and set the timer for what comes next. */
    async function step(key: string, pod: KObject, now: number): Promise<void> {
      const next = progress(pod, runSettings(pod, defaults, host.brand.keyDomain), now);
      if (next.status) {
        await writeStatus(pod, next.status);
        if (isTerminal({ status: next.status })) release(pod);
      }
      wake(key, next.wakeAt);
    }

    // A pod deleted under a sync (404) needs nothing more; its DELETED event frees its address.
    const queue = new WorkQueue(sync, (key, e) => {
      if ((e as { code?: number }).code !== 404) host.log.warn('simulated-nodes pod sync failed', { pod: key, error: String(e) });
    });

    return {
      async start() {
        podType = host.type('', 'pods');
        if (!podType) throw new Error('simulated-nodes: the pods type is not served');
        // Addresses already given out (before a restart) stay with their pods.
        for (const p of await host.objects.list(podType)) {
          const node = nodeNameOf(p);
          const ip = (p.status as J | undefined)?.podIP;
          if (node && addresses.has(node) && ip && !isTerminal(p) && !(isObj(p.spec) && p.spec.hostNetwork)) addresses.get(node)!.take(p.metadata!.uid!, ip);
        }
        await agents.start();
        unwatch.push(host.objects.watch(podType, (type, pod) => {
          const node = nodeNameOf(pod);
          if (!node || !nodes.has(node)) return;
          if (type === 'DELETED') {
            release(pod);
            killing.delete(pod.metadata!.uid!);
            wake(keyOf(pod));
            return;
          }
          queue.add(keyOf(pod));
        }));
        const nodeType = host.type('', 'nodes')!;
        unwatch.push(host.objects.watch(nodeType, (type, node) => {
          if (!nodes.has(node.metadata!.name!)) return;
          if (type === 'DELETED') agents.nodeDeleted(node.metadata!.name!);
          else agents.nodeChanged(node);
        }));
        for (const p of await host.objects.list(podType)) {
          const node = nodeNameOf(p);
          if (node && nodes.has(node)) queue.add(keyOf(p));
        }
      },
      async stop() {
        for (const u of unwatch) u();
        agents.stop();
        for (const t of timers.values()) clearTimeout(t);
        timers.clear();
        await queue.stop();
      },
    };
  },
};
export default plugin;
