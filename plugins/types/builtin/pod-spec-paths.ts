// Where each kind holds its pod spec, by row key (see catalog.ts rowKey): one table for the rules
// that reach into every pod spec (disabled features, claim templates).
export const POD_SPEC_AT: Readonly<Record<string, readonly string[]>> = {
  pods: ['spec'],
  podtemplates: ['template', 'spec'],
  replicationcontrollers: ['spec', 'template', 'spec'],
  'deployments.apps': ['spec', 'template', 'spec'],
  'replicasets.apps': ['spec', 'template', 'spec'],
  'statefulsets.apps': ['spec', 'template', 'spec'],
  'daemonsets.apps': ['spec', 'template', 'spec'],
  'jobs.batch': ['spec', 'template', 'spec'],
  'cronjobs.batch': ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};
