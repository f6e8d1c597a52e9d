// Every brand-bearing identifier of the spec comes from here. The default brand `cluster` is
// exactly the spec's text; `kubernetes` swaps in the ecosystem's names so stock clients work.
export interface Brand {
  name: string;
  /** Root domain of API groups and reserved keys: "cluster.io" | "k8s.io". */
  domain: string;
  /** Domain of reserved label, annotation and taint keys: "cluster.io" | "kubernetes.io" (the reference uses k8s.io for groups, kubernetes.io for keys). */
  keyDomain: string;
  /** Word used in `x-<word>-list-type` schema extensions. */
  ext: string;
  protobufType: string;
  systemNamespace: string;
  publicNamespace: string;
  /** Where node agents keep their heartbeat Leases. */
  nodeLeaseNamespace: string;
  nodeAgent: string;
  execInfoEnv: string;
  apiAccessVolumePrefix: string;
  namespaceFinalizer: string;
  /** Protobuf magic prefix: "k8s\0" in both brands (the spec's four bytes). */
  protobufMagic: Uint8Array;
  /** Client-side apply annotation (last-applied-configuration). */
  lastAppliedAnnotation: string;
  /** Default client-side apply manager name. */
  kubectlManager: string;
  /** Name of the command-line client, used in messages. */
  cli: string;
  /** The storage check of /healthz, /livez and /readyz when the backend names none ("etcd": tools such as the upstream e2e suite look for it). */
  storageCheck: string;
  /** The built-in certificate signers' names (Part B, Signers). */
  signers: { apiserverClient: string; apiserverClientNodeAgent: string; nodeAgentServing: string; legacyUnknown: string };
}

const magic = Uint8Array.from([0x6b, 0x38, 0x73, 0x00]);

export const brands: Record<string, Brand> = {
  cluster: {
    name: 'cluster',
    domain: 'cluster.io',
    keyDomain: 'cluster.io',
    ext: 'cluster',
    protobufType: 'application/vnd.cluster.protobuf',
    systemNamespace: 'cluster-system',
    publicNamespace: 'cluster-public',
    nodeLeaseNamespace: 'cluster-node-lease',
    nodeAgent: 'nodeagent',
    execInfoEnv: 'CLUSTER_EXEC_INFO',
    apiAccessVolumePrefix: 'cluster-api-access-',
    namespaceFinalizer: 'cluster',
    protobufMagic: magic,
    lastAppliedAnnotation: 'clusterctl.cluster.io/last-applied-configuration',
    kubectlManager: 'clusterctl',
    cli: 'clusterctl',
    storageCheck: 'storage',
    signers: { apiserverClient: 'cluster.io/apiserver-client', apiserverClientNodeAgent: 'cluster.io/apiserver-client-nodeagent', nodeAgentServing: 'cluster.io/nodeagent-serving', legacyUnknown: 'cluster.io/legacy-unknown' },
  },
  kubernetes: {
    name: 'kubernetes',
    domain: 'k8s.io',
    keyDomain: 'kubernetes.io',
    ext: 'kubernetes',
    protobufType: 'application/vnd.kubernetes.protobuf',
    systemNamespace: 'kube-system',
    publicNamespace: 'kube-public',
    nodeLeaseNamespace: 'kube-node-lease',
    nodeAgent: 'kubelet',
    execInfoEnv: 'KUBERNETES_EXEC_INFO',
    apiAccessVolumePrefix: 'kube-api-access-',
    namespaceFinalizer: 'kubernetes',
    protobufMagic: magic,
    lastAppliedAnnotation: 'kubectl.kubernetes.io/last-applied-configuration',
    kubectlManager: 'kubectl',
    cli: 'kubectl',
    storageCheck: 'etcd',
    signers: { apiserverClient: 'kubernetes.io/kube-apiserver-client', apiserverClientNodeAgent: 'kubernetes.io/kube-apiserver-client-kubelet', nodeAgentServing: 'kubernetes.io/kubelet-serving', legacyUnknown: 'kubernetes.io/legacy-unknown' },
  },
};

export function getBrand(name: string): Brand {
  const b = brands[name];
  if (!b) throw new Error(`unknown brand "${name}" (known: ${Object.keys(brands).join(', ')})`);
  return b;
}

/** Rewrite a group name written with the spec's placeholder domain into this brand: "apps" stays, "events.cluster.io" → "events.k8s.io". */
export function brandGroup(brand: Brand, group: string): string {
  return group.endsWith('.cluster.io') || group === 'cluster.io'
    ? group.slice(0, group.length - 'cluster.io'.length) + brand.domain
    : group;
}
