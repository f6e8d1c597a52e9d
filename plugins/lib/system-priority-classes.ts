// The reference's system PriorityClasses: made at the first start, the only classes a `system-`
// name may have, and the priorities the Priority admission plugin knows without reading them.
export const SYSTEM_PRIORITY_CLASSES = [
  { name: 'system-node-critical', value: 2000001000, description: 'Used for system critical pods that must not be moved from their current node.' },
  { name: 'system-cluster-critical', value: 2000000000, description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.' },
] as const;

/** name → value */
export const SYSTEM_PRIORITY: Readonly<Record<string, number>> = Object.fromEntries(SYSTEM_PRIORITY_CLASSES.map((c) => [c.name, c.value]));
