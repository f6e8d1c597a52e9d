// Table columns for the built-in types, as the reference server's printers define them. The kernel
// adds the Name column first; each list here holds the rest, Age included, in the reference's
// order (priority 1 marks the "wide" columns). Cells reproduce the reference's text: "<none>",
// "1/2", "80:30080/TCP", "5m30s".
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { TableColumn } from '../../../kernel/contracts/index.js';
import { NAME_DESCRIPTION } from '../../../kernel/api/repr/table.js';
import { hpaColumns } from './autoscaling.js';
import { labelDomain } from './catalog.js';
import { at, isObj, list, type J } from '../../lib/json.js';

// ---------------------------------------------------------------- time

/** The reference's human duration: exact at first, coarser as it grows (45s, 5m30s, 10m, 3h20m, 20h, 2d5h, 30d, 2y30d, 9y). */
export function humanDuration(ms: number): string {
  const sec = Math.trunc(ms / 1000);
  if (sec < -1) return '<invalid>'; // more than a little clock skew
  if (sec < 0) return '0s';
  if (sec < 120) return `${sec}s`;
  const min = Math.trunc(sec / 60);
  if (min < 10) return sec % 60 ? `${min}m${sec % 60}s` : `${min}m`;
  if (min < 180) return `${min}m`;
  const h = Math.trunc(min / 60);
  if (h < 8) return min % 60 ? `${h}h${min % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  const d = Math.trunc(h / 24);
  if (h < 24 * 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  if (h < 24 * 365 * 2) return `${d}d`;
  const y = Math.trunc(d / 365);
  if (h < 24 * 365 * 8) return d % 365 ? `${y}y${d % 365}d` : `${y}y`;
  return `${y}y`;
}

function time(ts: unknown): number {
  return typeof ts === 'string' && ts ? Date.parse(ts) : NaN;
}

/** Time since `ts` (an RFC 3339 timestamp) at `now` (ms), or "<unknown>" when unset. */
export function age(ts: unknown, now: number): string {
  const t = time(ts);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

// ---------------------------------------------------------------- formatting helpers

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
const orNone = (s: string): string => s || '<none>';

/** A label map as "a=1,b=2" (sorted), "<none>" when empty. */
export function formatLabels(m: unknown): string {
  return orNone(Object.keys(isObj(m) ? m : {}).sort().map((k) => `${k}=${(m as J)[k]}`).join(','));
}

/** A label selector in the reference's string form: "app=web,tier in (a,b),!legacy". */
export function selectorString(sel: unknown): string {
  if (!isObj(sel)) return '';
  const reqs: [string, string][] = Object.entries(isObj(sel.matchLabels) ? sel.matchLabels : {}).map(([k, v]) => [k, `${k}=${v}`]);
  for (const r of list(sel.matchExpressions)) {
    const vals = (Array.isArray(r.values) ? r.values.map(String) : []).sort().join(',');
    const k = text(r.key);
    const s = r.operator === 'In' ? `${k} in (${vals})` : r.operator === 'NotIn' ? `${k} notin (${vals})` : r.operator === 'Exists' ? k : r.operator === 'DoesNotExist' ? `!${k}` : '';
    reqs.push([k, s]);
  }
  return reqs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((r) => r[1]).join(',');
}

/** "a,b,c + 2 more..." after `max` items; `empty` when there are none. */
function firstFew(items: string[], max: number, empty: string): string {
  if (!items.length) return empty;
  const head = items.slice(0, max).join(',');
  return items.length > max ? `${head} + ${items.length - max} more...` : head;
}

function hostPort(ip: string, port: unknown): string {
  return `${ip.includes(':') ? `[${ip}]` : ip}:${port}`;
}

function accessModes(modes: unknown): string {
  const have = new Set(Array.isArray(modes) ? modes : []);
  const short: [string, string][] = [['ReadWriteOnce', 'RWO'], ['ReadOnlyMany', 'ROX'], ['ReadWriteMany', 'RWX'], ['ReadWriteOncePod', 'RWOP']];
  return short.filter(([m]) => have.has(m)).map(([, s]) => s).join(',');
}

function boolText(v: unknown): string {
  return v === true ? 'True' : v === false ? 'False' : '<unset>';
}

// ---------------------------------------------------------------- column builders

function col(name: string, type: TableColumn['type'], description: string, cell: (o: J, now: number) => unknown, priority = 0): TableColumn {
  return { name, type, description, ...(priority ? { priority } : {}), cell: cell as TableColumn['cell'] };
}

const AGE = col('Age', 'string', 'Time since the object was created.', (o, now) => age(at(o, 'metadata.creationTimestamp'), now));
/** The creation time itself (a date column), where the reference prints no age. */
const CREATED_AT = col('Created At', 'date', 'When the object was created.', (o) => {
  const t = time(at(o, 'metadata.creationTimestamp'));
  return Number.isNaN(t) ? '' : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
});

/** Role and cluster role bindings: the role, then (wide) the subjects by kind. */
const subjects = (o: J, kind: string) => list(o.subjects).filter((s) => s.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${text(s.namespace)}/${text(s.name)}` : text(s.name))).join(', ');
const bindingColumns = [
  col('Role', 'string', 'The role the binding grants.', (o) => `${text(at(o, 'roleRef.kind'))}/${text(at(o, 'roleRef.name'))}`),
  AGE,
  col('Users', 'string', 'Users in the binding.', (o) => subjects(o, 'User'), 1),
  col('Groups', 'string', 'Groups in the binding.', (o) => subjects(o, 'Group'), 1),
  col('ServiceAccounts', 'string', 'Service accounts in the binding.', (o) => subjects(o, 'ServiceAccount'), 1),
];
const webhookColumns = [col('Webhooks', 'integer', 'Number of webhooks in the configuration.', (o) => list(o.webhooks).length), AGE];

/** Wide Containers and Images columns for the containers found at `path`. */
function containerCols(path: string): TableColumn[] {
  return [
    col('Containers', 'string', 'Names of the containers in the template.', (o) => list(at(o, path)).map((c) => text(c.name)).join(','), 1),
    col('Images', 'string', 'Images of the containers in the template.', (o) => list(at(o, path)).map((c) => text(c.image)).join(','), 1),
  ];
}

const TEMPLATE_CONTAINERS = 'spec.template.spec.containers';
const wideSelector = col('Selector', 'string', 'Label selector of the pods this object manages.', (o) => selectorString(at(o, 'spec.selector')), 1);

// ---------------------------------------------------------------- pods

const conditionTrue = (status: J, type: string): boolean => list(status.conditions).some((c) => c.type === type && c.status === 'True');

interface PodSummary { ready: string; status: string; restarts: string }

/** Ready count, status reason and restarts, worked out the way the reference's pod printer does. */
export function podSummary(o: J, now: number): PodSummary {
  const spec = isObj(o.spec) ? o.spec : {};
  const st = isObj(o.status) ? o.status : {};
  const inits = list(spec.initContainers);
  // Init containers with restartPolicy Always are sidecars: they count as regular containers.
  const sidecars = new Set(inits.filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  const total = list(spec.containers).length + sidecars.size;
  let ready = 0;
  let restarts = 0;
  let lastRestart = 0;
  let sidecarRestarts = 0;
  let sidecarLastRestart = 0;
  let reason = text(st.reason || st.phase);
  if (list(st.conditions).some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) reason = 'SchedulingGated';
  const finishedAt = (cs: J) => time(at(cs, 'lastState.terminated.finishedAt')) || 0;

  let initializing = false;
  const initStatuses = list(st.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i]!;
    restarts += num(cs.restartCount);
    lastRestart = Math.max(lastRestart, finishedAt(cs));
    const sidecar = sidecars.has(cs.name);
    if (sidecar) {
      sidecarRestarts += num(cs.restartCount);
      sidecarLastRestart = Math.max(sidecarLastRestart, finishedAt(cs));
    }
    const term = at(cs, 'state.terminated');
    const wait = at(cs, 'state.waiting');
    if (isObj(term) && num(term.exitCode) === 0) continue; // finished fine
    if (sidecar && cs.started === true) {
      if (cs.ready === true) ready++;
      continue;
    }
    if (isObj(term)) reason = term.reason ? `Init:${term.reason}` : term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${num(term.exitCode)}`;
    else if (isObj(wait) && wait.reason && wait.reason !== 'PodInitializing') reason = `Init:${wait.reason}`;
    else reason = `Init:${i}/${inits.length}`;
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(st, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = sidecarLastRestart;
    let running = false;
    const statuses = list(st.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) { // the first container's state wins
      const cs = statuses[i]!;
      restarts += num(cs.restartCount);
      lastRestart = Math.max(lastRestart, finishedAt(cs));
      const term = at(cs, 'state.terminated');
      const wait = at(cs, 'state.waiting');
      if (isObj(wait) && wait.reason) reason = String(wait.reason);
      else if (isObj(term) && term.reason) reason = String(term.reason);
      else if (isObj(term)) reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${num(term.exitCode)}`;
      else if (cs.ready === true && isObj(at(cs, 'state.running'))) {
        running = true;
        ready++;
      }
    }
    // A pod whose first container completed while another still runs is not "Completed".
    if (reason === 'Completed' && running) reason = conditionTrue(st, 'Ready') ? 'Running' : 'NotReady';
  }

  if (at(o, 'metadata.deletionTimestamp')) reason = st.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return {
    ready: `${ready}/${total}`,
    status: reason,
    restarts: restarts !== 0 && lastRestart > 0 ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts),
  };
}

function readinessGates(o: J): string {
  const gates = list(at(o, 'spec.readinessGates'));
  if (!gates.length) return '<none>';
  const conds = list(at(o, 'status.conditions'));
  const ok = gates.filter((g) => conds.find((c) => c.type === g.conditionType)?.status === 'True').length;
  return `${ok}/${gates.length}`;
}

const podColumns: TableColumn[] = [
  col('Ready', 'string', 'Ready containers out of all containers.', (o, now) => podSummary(o, now).ready),
  col('Status', 'string', 'Aggregate status of the pod and its containers.', (o, now) => podSummary(o, now).status),
  col('Restarts', 'string', 'Container restarts, and how long ago the last one was.', (o, now) => podSummary(o, now).restarts),
  AGE,
  col('IP', 'string', 'IP address of the pod.', (o) => orNone(text(at(list(at(o, 'status.podIPs'))[0], 'ip') ?? at(o, 'status.podIP'))), 1),
  col('Node', 'string', 'Node the pod is bound to.', (o) => orNone(text(at(o, 'spec.nodeName'))), 1),
  col('Nominated Node', 'string', 'Node the scheduler nominated for preemption.', (o) => orNone(text(at(o, 'status.nominatedNodeName'))), 1),
  col('Readiness Gates', 'string', 'Readiness gates that are true out of all gates.', readinessGates, 1),
];

// ---------------------------------------------------------------- services

function servicePorts(o: J): string {
  const s = list(at(o, 'spec.ports')).map((p) => (num(p.nodePort) > 0 ? `${p.port}:${p.nodePort}/${text(p.protocol)}` : `${p.port}/${text(p.protocol)}`));
  return orNone(s.join(','));
}

function loadBalancerAddresses(status: unknown): string[] {
  return list(at(status, 'loadBalancer.ingress')).map((i) => text(i.ip || i.hostname)).filter(Boolean);
}

function externalIP(o: J): string {
  const spec = isObj(o.spec) ? o.spec : {};
  const ext: string[] = Array.isArray(spec.externalIPs) ? spec.externalIPs : [];
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return orNone(ext.join(','));
    case 'LoadBalancer': {
      const all = [...loadBalancerAddresses(o.status), ...ext];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return text(spec.externalName);
    default:
      return '<unknown>';
  }
}

// ---------------------------------------------------------------- events

/**
 * An events.cluster.io/v1 Event renamed into the core Event's fields, so one printer serves both;
 * rows are usually printed from the stored form, which is already the core one.
 */
function asCoreEvent(o: J): J {
  if (o.apiVersion === 'v1') return o;
  return {
    metadata: o.metadata, type: o.type, reason: o.reason, message: o.note, involvedObject: o.regarding,
    source: o.deprecatedSource, firstTimestamp: o.deprecatedFirstTimestamp, lastTimestamp: o.deprecatedLastTimestamp,
    count: o.deprecatedCount, eventTime: o.eventTime, series: o.series,
    reportingComponent: o.reportingController, reportingInstance: o.reportingInstance,
  };
}

function eventColumns(view: (o: J) => J): TableColumn[] {
  const first = (e: J, now: number) => (time(e.firstTimestamp) ? age(e.firstTimestamp, now) : age(e.eventTime, now));
  const last = (e: J, now: number) => {
    if (isObj(e.series)) return age(e.series.lastObservedTime, now);
    return time(e.lastTimestamp) ? age(e.lastTimestamp, now) : first(e, now);
  };
  const count = (e: J) => (isObj(e.series) ? num(e.series.count) : num(e.count) || 1); // singleton events carry no count
  const object = (e: J) => {
    const kind = text(at(e, 'involvedObject.kind')).toLowerCase();
    const name = text(at(e, 'involvedObject.name'));
    return name ? `${kind}/${name}` : kind;
  };
  const source = (e: J) => {
    const component = text(at(e, 'source.component') || e.reportingComponent);
    const host = text(at(e, 'source.host') || e.reportingInstance);
    return component ? (host ? `${component}, ${host}` : component) : '<unknown>';
  };
  // The reference's event table has no Age column; its Name column comes last (wide), not first.
  return [
    col('Last Seen', 'string', 'Time since the event was last seen.', (o, now) => last(view(o), now)),
    col('Type', 'string', 'Type of the event (Normal, Warning).', (o) => text(view(o).type)),
    col('Reason', 'string', 'Short reason for the event.', (o) => text(view(o).reason)),
    col('Object', 'string', 'Object the event is about.', (o) => object(view(o))),
    col('Subobject', 'string', 'Part of the object the event is about.', (o) => text(at(view(o), 'involvedObject.fieldPath')), 1),
    col('Source', 'string', 'Component that reported the event.', (o) => source(view(o)), 1),
    col('Message', 'string', 'Description of the event.', (o) => text(view(o).message).trim()),
    col('First Seen', 'string', 'Time since the event was first seen.', (o, now) => first(view(o), now), 1),
    col('Count', 'string', 'How often the event occurred.', (o) => count(view(o)), 1),
    { ...col('Name', 'string', NAME_DESCRIPTION, (o) => text(at(o, 'metadata.name')), 1), format: 'name', isName: true },
  ];
}

// ---------------------------------------------------------------- the table

/** Columns by row key (see catalog.ts rowKey), for one brand (node roles and storage-class annotations carry the brand). */
export function columnsFor(brand: Brand): Record<string, TableColumn[]> {
  const d = labelDomain(brand);
  // The class field, or the beta annotation it replaced.
  const storageClass = (o: J) => {
    const ann = at(o, 'metadata.annotations');
    return text(at(o, 'spec.storageClassName') ?? (isObj(ann) ? ann[`volume.beta.${d}/storage-class`] : ''));
  };

  const nodeRoles = (o: J): string => {
    const roles = new Set<string>();
    for (const [k, v] of Object.entries(isObj(at(o, 'metadata.labels')) ? (at(o, 'metadata.labels') as J) : {})) {
      if (k.startsWith(`node-role.${d}/`) && k.length > `node-role.${d}/`.length) roles.add(k.slice(`node-role.${d}/`.length));
      else if (k === `${d}/role` && v) roles.add(String(v));
    }
    return orNone([...roles].sort().join(','));
  };
  const nodeStatus = (o: J): string => {
    const ready = list(at(o, 'status.conditions')).find((c) => c.type === 'Ready');
    const s = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
    if (at(o, 'spec.unschedulable') === true) s.push('SchedulingDisabled');
    return s.join(',');
  };
  const nodeAddress = (type: string) => (o: J) => orNone(text(list(at(o, 'status.addresses')).find((a) => a.type === type)?.address));
  const nodeInfo = (k: string) => (o: J) => text(at(o, `status.nodeInfo.${k}`)) || '<unknown>';

  const phase = (o: J) => (at(o, 'metadata.deletionTimestamp') ? 'Terminating' : text(at(o, 'status.phase')));

  return {
    pods: podColumns,
    podtemplates: [
      col('Containers', 'string', 'Names of the containers in the template.', (o) => list(at(o, 'template.spec.containers')).map((c) => text(c.name)).join(',')),
      col('Images', 'string', 'Images of the containers in the template.', (o) => list(at(o, 'template.spec.containers')).map((c) => text(c.image)).join(',')),
      col('Pod Labels', 'string', 'Labels of the pod template.', (o) => formatLabels(at(o, 'template.metadata.labels'))),
    ],
    services: [
      col('Type', 'string', 'How the service is exposed.', (o) => text(at(o, 'spec.type'))),
      col('Cluster-IP', 'string', 'Virtual IP of the service inside the cluster.', (o) => {
        const ips = at(o, 'spec.clusterIPs');
        return orNone(text(Array.isArray(ips) && ips.length ? ips[0] : at(o, 'spec.clusterIP')));
      }),
      col('External-IP', 'string', 'Addresses the service is reachable at from outside the cluster.', externalIP),
      col('Port(s)', 'string', 'Service ports, with node ports.', servicePorts),
      AGE,
      col('Selector', 'string', 'Labels of the pods the service routes to.', (o) => formatLabels(at(o, 'spec.selector')), 1),
    ],
    namespaces: [col('Status', 'string', 'Lifecycle phase of the namespace.', (o) => text(at(o, 'status.phase'))), AGE],
    nodes: [
      col('Status', 'string', 'Readiness of the node.', nodeStatus),
      col('Roles', 'string', 'Roles of the node, from its labels.', nodeRoles),
      AGE,
      col('Version', 'string', 'Version of the node agent.', (o) => text(at(o, 'status.nodeInfo.kubeletVersion'))),
      col('Internal-IP', 'string', 'Internal address of the node.', nodeAddress('InternalIP'), 1),
      col('External-IP', 'string', 'External address of the node.', nodeAddress('ExternalIP'), 1),
      col('OS-Image', 'string', 'Operating system image of the node.', nodeInfo('osImage'), 1),
      col('Kernel-Version', 'string', 'Kernel version of the node.', nodeInfo('kernelVersion'), 1),
      col('Container-Runtime', 'string', 'Container runtime of the node.', nodeInfo('containerRuntimeVersion'), 1),
    ],
    configmaps: [col('Data', 'string', 'Number of keys.', (o) => Object.keys(isObj(o.data) ? o.data : {}).length + Object.keys(isObj(o.binaryData) ? o.binaryData : {}).length), AGE],
    secrets: [
      col('Type', 'string', 'Type of the secret.', (o) => text(o.type)),
      col('Data', 'string', 'Number of keys.', (o) => Object.keys({ ...(isObj(o.data) ? o.data : {}), ...(isObj(o.stringData) ? o.stringData : {}) }).length),
      AGE,
    ],
    serviceaccounts: [col('Secrets', 'string', 'Number of secrets of the service account.', (o) => list(o.secrets).length), AGE],
    events: eventColumns((o) => o),
    'events.events.cluster.io': eventColumns(asCoreEvent),
    endpoints: [
      col('Endpoints', 'string', 'Addresses and ports of the endpoints.', (o) => {
        const subsets = list(o.subsets);
        if (!subsets.length) return '<none>';
        const all: string[] = [];
        for (const ss of subsets) {
          const ips = list(ss.addresses).map((a) => text(a.ip));
          const ports = list(ss.ports);
          if (!ports.length) all.push(...ips); // headless services may have no ports
          for (const p of ports) all.push(...ips.map((ip) => hostPort(ip, p.port)));
        }
        return firstFew(all, 3, '');
      }),
      AGE,
    ],
    persistentvolumes: [
      col('Capacity', 'string', 'Storage capacity.', (o) => text(at(o, 'spec.capacity.storage')) || '0'),
      col('Access Modes', 'string', 'Access modes.', (o) => accessModes(at(o, 'spec.accessModes'))),
      col('Reclaim Policy', 'string', 'What happens to the volume when its claim is released.', (o) => text(at(o, 'spec.persistentVolumeReclaimPolicy'))),
      col('Status', 'string', 'Lifecycle phase of the volume.', phase),
      col('Claim', 'string', 'Claim bound to the volume.', (o) => (isObj(at(o, 'spec.claimRef')) ? `${text(at(o, 'spec.claimRef.namespace'))}/${text(at(o, 'spec.claimRef.name'))}` : '')),
      col('StorageClass', 'string', 'Storage class of the volume.', storageClass),
      col('Reason', 'string', 'Why the volume is in its phase.', (o) => text(at(o, 'status.reason'))),
      AGE,
      col('VolumeMode', 'string', 'Filesystem or Block.', (o) => text(at(o, 'spec.volumeMode')) || '<unset>', 1),
    ],
    persistentvolumeclaims: [
      col('Status', 'string', 'Lifecycle phase of the claim.', phase),
      col('Volume', 'string', 'Volume bound to the claim.', (o) => text(at(o, 'spec.volumeName'))),
      col('Capacity', 'string', 'Capacity of the bound volume.', (o) => (at(o, 'spec.volumeName') ? text(at(o, 'status.capacity.storage')) || '0' : '')),
      col('Access Modes', 'string', 'Access modes of the bound volume.', (o) => (at(o, 'spec.volumeName') ? accessModes(at(o, 'status.accessModes')) : '')),
      col('StorageClass', 'string', 'Storage class of the claim.', storageClass),
      AGE,
      col('VolumeMode', 'string', 'Filesystem or Block.', (o) => text(at(o, 'spec.volumeMode')) || '<unset>', 1),
    ],
    limitranges: [CREATED_AT],
    // The reference's printer: the Healthy condition's status as Healthy/Unhealthy, then its message and error.
    componentstatuses: (() => {
      const healthy = (o: J) => list(o.conditions).find((c) => c.type === 'Healthy');
      return [
        col('Status', 'string', 'Status of the component conditions', (o) => { const c = healthy(o); return c ? (c.status === 'True' ? 'Healthy' : 'Unhealthy') : 'Unknown'; }),
        col('Message', 'string', 'Message of the component conditions', (o) => text(healthy(o)?.message)),
        col('Error', 'string', 'Error of the component conditions', (o) => text(healthy(o)?.error)),
      ];
    })(),
    resourcequotas: [
      AGE,
      col('Request', 'string', 'Used and hard request quotas.', (o) => quotaText(o, false)),
      col('Limit', 'string', 'Used and hard limit quotas.', (o) => quotaText(o, true)),
    ],
    replicationcontrollers: [
      col('Desired', 'integer', 'Desired replicas.', (o) => num(at(o, 'spec.replicas'))),
      col('Current', 'integer', 'Current replicas.', (o) => num(at(o, 'status.replicas'))),
      col('Ready', 'integer', 'Ready replicas.', (o) => num(at(o, 'status.readyReplicas'))),
      AGE,
      ...containerCols(TEMPLATE_CONTAINERS),
      col('Selector', 'string', 'Labels of the pods this object manages.', (o) => formatLabels(at(o, 'spec.selector')), 1),
    ],
    'deployments.apps': [
      col('Ready', 'string', 'Ready replicas out of desired replicas.', (o) => `${num(at(o, 'status.readyReplicas'))}/${num(at(o, 'spec.replicas'))}`),
      col('Up-to-date', 'string', 'Replicas running the current template.', (o) => num(at(o, 'status.updatedReplicas'))),
      col('Available', 'string', 'Replicas available to users.', (o) => num(at(o, 'status.availableReplicas'))),
      AGE,
      ...containerCols(TEMPLATE_CONTAINERS),
      wideSelector,
    ],
    'replicasets.apps': [
      col('Desired', 'integer', 'Desired replicas.', (o) => num(at(o, 'spec.replicas'))),
      col('Current', 'integer', 'Current replicas.', (o) => num(at(o, 'status.replicas'))),
      col('Ready', 'integer', 'Ready replicas.', (o) => num(at(o, 'status.readyReplicas'))),
      AGE,
      ...containerCols(TEMPLATE_CONTAINERS),
      wideSelector,
    ],
    'statefulsets.apps': [
      col('Ready', 'string', 'Ready replicas out of desired replicas.', (o) => `${num(at(o, 'status.readyReplicas'))}/${num(at(o, 'spec.replicas'))}`),
      AGE,
      ...containerCols(TEMPLATE_CONTAINERS),
    ],
    'daemonsets.apps': [
      col('Desired', 'integer', 'Nodes that should run the pod.', (o) => num(at(o, 'status.desiredNumberScheduled'))),
      col('Current', 'integer', 'Nodes running the pod.', (o) => num(at(o, 'status.currentNumberScheduled'))),
      col('Ready', 'integer', 'Nodes with a ready pod.', (o) => num(at(o, 'status.numberReady'))),
      col('Up-to-date', 'integer', 'Nodes running the current template.', (o) => num(at(o, 'status.updatedNumberScheduled'))),
      col('Available', 'integer', 'Nodes with an available pod.', (o) => num(at(o, 'status.numberAvailable'))),
      col('Node Selector', 'string', 'Node labels the pods require.', (o) => formatLabels(at(o, 'spec.template.spec.nodeSelector'))),
      AGE,
      ...containerCols(TEMPLATE_CONTAINERS),
      wideSelector,
    ],
    'controllerrevisions.apps': [
      col('Controller', 'string', 'Controller that owns the revision.', (o) => {
        const ref = list(at(o, 'metadata.ownerReferences')).find((r) => r.controller === true);
        if (!ref) return '<none>';
        const group = text(ref.apiVersion).includes('/') ? text(ref.apiVersion).split('/')[0] : '';
        return `${(group ? `${ref.kind}.${group}` : text(ref.kind)).toLowerCase()}/${text(ref.name)}`;
      }),
      col('Revision', 'string', 'Revision number.', (o) => num(o.revision)),
      AGE,
    ],
    'jobs.batch': [
      col('Completions', 'string', 'Succeeded pods out of the completions wanted.', (o) => {
        const ok = num(at(o, 'status.succeeded'));
        const completions = at(o, 'spec.completions');
        const parallelism = at(o, 'spec.parallelism');
        if (typeof completions === 'number') return `${ok}/${completions}`;
        return typeof parallelism === 'number' && parallelism > 1 ? `${ok}/1 of ${parallelism}` : `${ok}/1`;
      }),
      col('Duration', 'string', 'How long the job ran, or has been running.', (o, now) => {
        const start = time(at(o, 'status.startTime'));
        if (Number.isNaN(start)) return '';
        const end = time(at(o, 'status.completionTime'));
        return humanDuration((Number.isNaN(end) ? now : end) - start);
      }),
      AGE,
      ...containerCols(TEMPLATE_CONTAINERS),
      wideSelector,
    ],
    'cronjobs.batch': [
      col('Schedule', 'string', 'Cron schedule.', (o) => text(at(o, 'spec.schedule'))),
      col('Suspend', 'boolean', 'Whether new runs are suspended.', (o) => boolText(at(o, 'spec.suspend'))),
      col('Active', 'integer', 'Number of running jobs.', (o) => list(at(o, 'status.active')).length),
      col('Last Schedule', 'string', 'Time since the job was last scheduled.', (o, now) => (at(o, 'status.lastScheduleTime') ? age(at(o, 'status.lastScheduleTime'), now) : '<none>')),
      AGE,
      ...containerCols('spec.jobTemplate.spec.template.spec.containers'),
      col('Selector', 'string', 'Label selector of the jobs\' pods.', (o) => selectorString(at(o, 'spec.jobTemplate.spec.selector')), 1),
    ],
    'leases.coordination.cluster.io': [col('Holder', 'string', 'Current holder of the lease.', (o) => text(at(o, 'spec.holderIdentity'))), AGE],
    'ingresses.networking.cluster.io': [
      col('Class', 'string', 'Ingress class.', (o) => text(at(o, 'spec.ingressClassName')) || '<none>'),
      col('Hosts', 'string', 'Hosts of the rules.', (o) => {
        const rules = list(at(o, 'spec.rules'));
        const hosts = rules.slice(0, 3).map((r) => text(r.host)).filter(Boolean);
        if (!hosts.length) return '*';
        return rules.length > 3 ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
      }),
      col('Address', 'string', 'Load balancer addresses.', (o) => loadBalancerAddresses(o.status).join(',')),
      col('Ports', 'string', 'Ports served.', (o) => (list(at(o, 'spec.tls')).length ? '80, 443' : '80')),
      AGE,
    ],
    'ingressclasses.networking.cluster.io': [
      col('Controller', 'string', 'Controller that implements the class.', (o) => text(at(o, 'spec.controller'))),
      col('Parameters', 'string', 'Parameters object of the class.', (o) => {
        const p = at(o, 'spec.parameters');
        if (!isObj(p)) return '<none>';
        return `${text(p.kind)}${p.apiGroup ? `.${p.apiGroup}` : ''}/${text(p.name)}`;
      }),
      AGE,
    ],
    'networkpolicies.networking.cluster.io': [col('Pod-Selector', 'string', 'Pods the policy applies to.', (o) => orNone(selectorString(at(o, 'spec.podSelector')))), AGE],
    'horizontalpodautoscalers.autoscaling': hpaColumns(AGE),
    'flowschemas.flowcontrol.apiserver.cluster.io': [
      col('PriorityLevel', 'string', 'Priority level of the matched requests.', (o) => text(at(o, 'spec.priorityLevelConfiguration.name'))),
      // a number in the cell, but the reference declares the column a string
      col('MatchingPrecedence', 'string', 'Order among flow schemas (lower first).', (o) => num(at(o, 'spec.matchingPrecedence'))),
      col('DistinguisherMethod', 'string', 'How flows are told apart.', (o) => text(at(o, 'spec.distinguisherMethod.type')) || '<none>'),
      AGE,
      col('MissingPL', 'string', 'Whether the priority level is missing (the Dangling condition).', (o) => text(list(at(o, 'status.conditions')).find((c) => c.type === 'Dangling')?.status) || '?'),
    ],
    'prioritylevelconfigurations.flowcontrol.apiserver.cluster.io': [
      col('Type', 'string', 'Exempt or Limited.', (o) => text(at(o, 'spec.type'))),
      col('NominalConcurrencyShares', 'string', 'Share of the server concurrency.', (o) => (isObj(at(o, 'spec.limited')) ? num(at(o, 'spec.limited.nominalConcurrencyShares')) : '<none>')),
      col('Queues', 'string', 'Queues of the level.', (o) => { const q = at(o, 'spec.limited.limitResponse.queuing'); return isObj(q) ? num(q.queues) : '<none>'; }),
      col('HandSize', 'string', 'Queues a flow is dealt.', (o) => { const q = at(o, 'spec.limited.limitResponse.queuing'); return isObj(q) ? num(q.handSize) : '<none>'; }),
      col('QueueLengthLimit', 'string', 'Requests a queue holds.', (o) => { const q = at(o, 'spec.limited.limitResponse.queuing'); return isObj(q) ? num(q.queueLengthLimit) : '<none>'; }),
      AGE,
    ],
    'poddisruptionbudgets.policy': [
      col('Min Available', 'string', 'Pods that must stay available.', (o) => text(at(o, 'spec.minAvailable')) || 'N/A'),
      col('Max Unavailable', 'string', 'Pods that may be unavailable.', (o) => text(at(o, 'spec.maxUnavailable')) || 'N/A'),
      col('Allowed Disruptions', 'integer', 'Disruptions allowed now.', (o) => num(at(o, 'status.disruptionsAllowed'))),
      AGE,
    ],
    'priorityclasses.scheduling.cluster.io': [
      col('Value', 'integer', 'Priority of pods using the class.', (o) => num(o.value)),
      col('Global-Default', 'boolean', 'Whether pods without a class get this one.', (o) => o.globalDefault === true),
      AGE, // later reference releases add PreemptionPolicy; the 1.28 reference has none
    ],
    'storageclasses.storage.cluster.io': [
      col('Provisioner', 'string', 'Volume provisioner.', (o) => text(o.provisioner)),
      col('ReclaimPolicy', 'string', 'Reclaim policy of provisioned volumes.', (o) => text(o.reclaimPolicy) || 'Delete'),
      col('VolumeBindingMode', 'string', 'When volumes are bound.', (o) => text(o.volumeBindingMode) || 'Immediate'),
      col('AllowVolumeExpansion', 'string', 'Whether volumes may grow.', (o) => o.allowVolumeExpansion === true),
      AGE,
    ],
    'csidrivers.storage.cluster.io': [
      col('AttachRequired', 'boolean', 'Whether the driver needs an attach step.', (o) => at(o, 'spec.attachRequired') !== false),
      col('PodInfoOnMount', 'boolean', 'Whether pod information is passed on mount.', (o) => at(o, 'spec.podInfoOnMount') === true),
      col('StorageCapacity', 'boolean', 'Whether the scheduler considers storage capacity.', (o) => at(o, 'spec.storageCapacity') === true),
      col('TokenRequests', 'string', 'Audiences of the tokens passed to the driver.', (o) => (Array.isArray(at(o, 'spec.tokenRequests')) ? list(at(o, 'spec.tokenRequests')).map((t) => text(t.audience)).join(',') : '<unset>')),
      col('RequiresRepublish', 'boolean', 'Whether volumes are republished periodically.', (o) => at(o, 'spec.requiresRepublish') === true),
      col('Modes', 'string', 'Volume lifecycle modes.', (o) => orNone((Array.isArray(at(o, 'spec.volumeLifecycleModes')) ? (at(o, 'spec.volumeLifecycleModes') as unknown[]) : []).join(','))),
      AGE,
    ],
    'csinodes.storage.cluster.io': [col('Drivers', 'integer', 'Number of drivers on the node.', (o) => list(at(o, 'spec.drivers')).length), AGE],
    'volumeattachments.storage.cluster.io': [
      { ...col('Attacher', 'string', 'Driver that attaches the volume.', (o) => text(at(o, 'spec.attacher'))), format: 'name' },
      col('PV', 'string', 'Persistent volume being attached.', (o) => text(at(o, 'spec.source.persistentVolumeName'))),
      col('Node', 'string', 'Node the volume is attached to.', (o) => text(at(o, 'spec.nodeName'))),
      col('Attached', 'boolean', 'Whether the volume is attached.', (o) => at(o, 'status.attached') === true),
      AGE,
    ],
    'endpointslices.discovery.cluster.io': [
      col('AddressType', 'string', 'Type of the addresses.', (o) => text(o.addressType)),
      col('Ports', 'string', 'Ports of the slice.', (o) => firstFew(list(o.ports).map((p) => (typeof p.port === 'number' ? String(p.port) : p.name ? text(p.name) : '*')), 3, '<unset>')),
      col('Endpoints', 'string', 'Addresses of the endpoints.', (o) => firstFew(list(o.endpoints).flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(String) : [])), 3, '<unset>')),
      AGE,
    ],
    'runtimeclasses.node.cluster.io': [col('Handler', 'string', 'Runtime handler of the class.', (o) => text(o.handler)), AGE],
    // (storage capacities have no printer in the reference: the default Name and Created At)
    'clusterroles.rbac.authorization.cluster.io': [CREATED_AT],
    'roles.rbac.authorization.cluster.io': [CREATED_AT],
    'clusterrolebindings.rbac.authorization.cluster.io': bindingColumns,
    'rolebindings.rbac.authorization.cluster.io': bindingColumns,
    'mutatingwebhookconfigurations.admissionregistration.cluster.io': webhookColumns,
    'validatingwebhookconfigurations.admissionregistration.cluster.io': webhookColumns,
  };
}

/** "cpu: 100m/1, pods: 2/10": used/hard per resource, sorted; limits.* resources go in the Limit column. */
function quotaText(o: J, limits: boolean): string {
  const hard = isObj(at(o, 'status.hard')) ? (at(o, 'status.hard') as J) : {};
  const used = isObj(at(o, 'status.used')) ? (at(o, 'status.used') as J) : {};
  return Object.keys(hard).sort()
    .filter((r) => (r.split('.').length > 1 && r.split('.')[0] === 'limits') === limits)
    .map((r) => `${r}: ${text(used[r]) || '0'}/${text(hard[r])}`)
    .join(', ');
}

