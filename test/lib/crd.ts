// Helpers of the custom resource tests: create a definition and wait until it is Established.
import type { TestServer } from './server.js';
import { eventually } from './poll.js';
export { eventually };

/** Creates a CustomResourceDefinition (of whatever brand its apiVersion names) and waits until it is Established. */
export async function establish(s: TestServer, crd: any): Promise<any> {
  const base = `/apis/${crd.apiVersion}/customresourcedefinitions`;
  const r = await s.request('POST', base, { body: crd });
  if (r.status !== 201) throw new Error(`create CRD: ${r.status} ${r.text}`);
  let got: any;
  const ok = await eventually(async () => {
    got = (await s.get(`${base}/${crd.metadata.name}`)).json;
    return got?.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True');
  });
  if (!ok) throw new Error(`CRD not established: ${JSON.stringify(got?.status)}`);
  return got;
}

/** A namespaced Widget definition (example.com/v1, cluster brand) with a schema using most structural features, status and scale sub-resources and printer columns. */
export function widgetCRD(extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apiextensions.cluster.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com', scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object', required: ['size'],
              properties: {
                size: { type: 'string', enum: ['small', 'large'] },
                replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
                color: { type: 'string', pattern: '^[a-z]+$', maxLength: 10 },
                tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
                ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } } },
                free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                port: { 'x-kubernetes-int-or-string': true },
                note: { type: 'string', nullable: true },
                selector: { type: 'string' },
              },
            },
            status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' }, phase: { type: 'string' } } },
          },
        } },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [
          { name: 'Size', type: 'string', jsonPath: '.spec.size' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
        ],
      }],
      ...extra,
    },
  };
}

