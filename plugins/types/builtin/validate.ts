// Type-specific validation for the built-in types: a modest subset of the reference's rules, with
// its field paths ("spec.containers[0].image") and error bodies ("Required value",
// "Invalid value: <v>: <detail>") so that clients see the same 422 causes. Name syntax and object
// metadata are the kernel's job; these run after defaulting.
import { validateHpa } from './autoscaling.js';
import { validateCoreEvent, validateEventsV1 } from './events.js';
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { FieldCause, KObject } from '../../../kernel/contracts/index.js';
import { labelDomain } from './catalog.js';
import { isObj } from '../../lib/json.js';
import { type Validator, required, forbidden, tooLong, invalid, configKeyErrors, base64Length, canon, labelsOf } from './validation/causes.js';
import { ingress, ingressClass, networkPolicy } from './validation/networking.js';
import { clusterRole, clusterRoleBinding, role, roleBinding } from './validation/rbac.js';
import { webhookConfiguration } from './validation/webhooks.js';
import { service } from './validation/services.js';
import { podDisruptionBudget } from './validation/policy.js';
import { endpointSlice } from './validation/discovery.js';
import { flowSchema, priorityLevelConfiguration } from './validation/flowcontrol.js';
import { csiDriver, csiNode, csiStorageCapacity, storageClass, volumeAttachment } from './validation/storage.js';
import { podSpecCauses } from './validation/pod.js';
import { WORKLOAD_VALIDATORS } from './validation/workloads.js';
import { JOB_VALIDATORS } from './validation/jobs.js';
import { persistentVolume, persistentVolumeClaim } from './validation/persistentvolumes.js';
import { limitRange, resourceQuota } from './validation/quota.js';
import { endpoints, namespace, node } from './validation/core.js';


// ---------------------------------------------------------------- config maps and secrets

const MAX_SIZE = 1024 * 1024;

/** A config key with nothing to say about it (nearly all): one test, no message list built. */
const GOOD_KEY = /^(?!\.\.)(?!\.$)[-._a-zA-Z0-9]{1,253}$/;

function keyCauses(out: FieldCause[], map: unknown, p: string): void {
  for (const k of Object.keys(labelsOf(map))) {
    if (!GOOD_KEY.test(k)) for (const m of configKeyErrors(k)) out.push(invalid(`${p}[${k}]`, k, m));
  }
}

/** Once `immutable` is true, neither the data nor the flag may change. */
function immutableCauses(out: FieldCause[], o: KObject, old: KObject | undefined, dataKeys: string[]): void {
  if (!old || old.immutable !== true) return;
  const msg = 'field is immutable when `immutable` is set';
  if (o.immutable !== true) out.push(forbidden('immutable', msg));
  for (const k of dataKeys) if (canon(o[k] ?? {}) !== canon(old[k] ?? {})) out.push(forbidden(k, msg));
}

function configMap(o: KObject, old: KObject | undefined): FieldCause[] {
  const out: FieldCause[] = [];
  const data = labelsOf(o.data);
  const binary = isObj(o.binaryData) ? o.binaryData : undefined;
  // One walk of data's keys (listing 50,000 keys alone takes ~14 ms): the key rules, then sizes.
  const keys = Object.keys(data);
  for (const k of keys) if (!GOOD_KEY.test(k)) for (const m of configKeyErrors(k)) out.push(invalid(`data[${k}]`, k, m));
  keyCauses(out, binary, 'binaryData');
  let size = 0;
  for (const k of keys) {
    size += k.length + Buffer.byteLength(String(data[k]));
    if (binary && Object.hasOwn(binary, k)) out.push(invalid(`binaryData[${k}]`, k, 'duplicate of key present in data'));
  }
  for (const [k, v] of Object.entries(labelsOf(o.binaryData))) {
    const b = base64Length(String(v));
    size += k.length + ('bytes' in b ? b.bytes : 0);
  }
  // The reference's path is the empty one, which it prints as "[]".
  if (size > MAX_SIZE) out.push(tooLong('[]', MAX_SIZE));
  immutableCauses(out, o, old, ['data', 'binaryData']);
  return out;
}

function secret(o: KObject, old: KObject | undefined, brand: Brand): FieldCause[] {
  const out: FieldCause[] = [];
  const data = labelsOf(o.data);
  keyCauses(out, data, 'data');
  let size = 0;
  for (const [k, v] of Object.entries(data)) {
    const b = base64Length(String(v));
    // Never echo secret data back in an error.
    if ('bad' in b) out.push(invalid(`data[${k}]`, v, `illegal base64 data at input byte ${b.bad}`, '"<secret contents redacted>"'));
    else size += b.bytes;
  }
  if (size > MAX_SIZE) out.push(tooLong('data', MAX_SIZE));
  // Typed secrets must carry their keys.
  const d = labelDomain(brand);
  const needs: Record<string, string[]> = {
    [`${d}/tls`]: ['tls.crt', 'tls.key'],
    [`${d}/dockercfg`]: ['.dockercfg'],
    [`${d}/dockerconfigjson`]: ['.dockerconfigjson'],
    [`${d}/ssh-auth`]: ['ssh-privatekey'],
  };
  const keys = { ...data, ...labelsOf(o.stringData) };
  for (const k of needs[o.type as string] ?? []) if (!(k in keys)) out.push(required(`data[${k}]`));
  if (o.type === `${d}/service-account-token` && !labelsOf(o.metadata?.annotations)[`${d}/service-account.name`]) {
    out.push(required(`metadata.annotations[${d}/service-account.name]`));
  }
  if (old && (old.type ?? 'Opaque') !== (o.type ?? 'Opaque')) out.push(invalid('type', o.type, 'field is immutable'));
  immutableCauses(out, o, old, ['data']);
  return out;
}


/** Validators by row key (see catalog.ts rowKey). */
export const VALIDATORS: Record<string, Validator> = {
  pods: (o) => podSpecCauses(o.spec, 'spec', true, o.metadata?.name),
  ...WORKLOAD_VALIDATORS,
  ...JOB_VALIDATORS,
  services: service,
  configmaps: configMap,
  secrets: secret,
  persistentvolumeclaims: persistentVolumeClaim,
  persistentvolumes: persistentVolume,
  limitranges: limitRange,
  resourcequotas: resourceQuota,
  endpoints,
  nodes: node,
  namespaces: namespace,
  'horizontalpodautoscalers.autoscaling': validateHpa,
  events: validateCoreEvent,
  'events.events.cluster.io': validateEventsV1,
  'ingresses.networking.cluster.io': ingress,
  'ingressclasses.networking.cluster.io': ingressClass,
  'roles.rbac.authorization.cluster.io': role,
  'poddisruptionbudgets.policy': podDisruptionBudget,
  'endpointslices.discovery.cluster.io': endpointSlice,
  'flowschemas.flowcontrol.apiserver.cluster.io': flowSchema,
  'prioritylevelconfigurations.flowcontrol.apiserver.cluster.io': priorityLevelConfiguration,
  'storageclasses.storage.cluster.io': storageClass,
  'csinodes.storage.cluster.io': csiNode,
  'csidrivers.storage.cluster.io': csiDriver,
  'csistoragecapacities.storage.cluster.io': csiStorageCapacity,
  'volumeattachments.storage.cluster.io': volumeAttachment,
  'clusterroles.rbac.authorization.cluster.io': clusterRole,
  'rolebindings.rbac.authorization.cluster.io': roleBinding,
  'clusterrolebindings.rbac.authorization.cluster.io': clusterRoleBinding,
  'networkpolicies.networking.cluster.io': networkPolicy,
  'mutatingwebhookconfigurations.admissionregistration.cluster.io': webhookConfiguration(true),
  'validatingwebhookconfigurations.admissionregistration.cluster.io': webhookConfiguration(false),
};
