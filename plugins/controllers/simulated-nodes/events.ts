// The Events a node agent records about the pods it runs (core/v1, from the node agent on its host),
// so that `describe pod` reads as on a real node: Pulled, Created, Started per container at the
// start, Killing per running container at a graceful deletion. Best effort, as the node agent's own
// recorder: a refused event (a namespace being deleted) is dropped.
import type { KObject, PluginHost } from '../../../kernel/contracts/index.js';
import { isObj, list, type J } from '../../lib/json.js';
import { recordEvent } from '../../lib/core-events.js';

export type PodEvent = 'started' | 'killing';

function lines(pod: KObject, what: PodEvent): [string, string, string][] {
  const spec: J = isObj(pod.spec) ? pod.spec : {};
  const out: [string, string, string][] = [];
  const each = (field: string, cs: J[]) => cs.forEach((c) => {
    const path = `${field}{${c.name}}`;
    if (what === 'killing') out.push([path, 'Killing', `Stopping container ${c.name}`]);
    else out.push([path, 'Pulled', `Container image "${c.image}" already present on machine`], [path, 'Created', `Created container ${c.name}`], [path, 'Started', `Started container ${c.name}`]);
  });
  if (what === 'started') each('spec.initContainers', list(spec.initContainers));
  each('spec.containers', list(spec.containers));
  return out;
}

export async function recordPodEvents(host: PluginHost, pod: KObject, node: string, what: PodEvent): Promise<void> {
  const about = { apiVersion: 'v1', kind: 'Pod', ...pod };
  for (const [fieldPath, reason, message] of lines(pod, what)) await recordEvent(host, host.brand.nodeAgent, about, 'Normal', reason, message, { fieldPath, node });
}
