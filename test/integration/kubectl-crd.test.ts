// Stock kubectl with custom resources (kubernetes brand): a multi-document file with a definition
// (schema, status and scale sub-resources, printer columns, short name, category) and instances;
// kubectl wait for Established; get by short name with the printer columns; get all; explain;
// scale; a schema-breaking instance refused with the reference's message; deleting the definition
// removes the instances.
import t from 'tap';
import { withServer } from '../lib/server.js';
import { kubectl, noKubectl } from '../lib/kubectl.js';

export const CRONTAB_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: A CronTab runs an image on a schedule.
        type: object
        properties:
          spec:
            description: What to run and how often.
            type: object
            required: [cronSpec]
            x-kubernetes-validations:
            - rule: "!has(self.replicas) || self.replicas <= 8"
              message: at most 8 replicas may run at once
            properties:
              cronSpec:
                description: The schedule in cron format.
                type: string
                pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'
              image:
                type: string
              replicas:
                type: integer
                minimum: 0
                maximum: 10
                default: 1
          status:
            type: object
            properties:
              replicas:
                type: integer
              selector:
                type: string
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - name: Schedule
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
`;

const INSTANCES = `---
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: nightly
  namespace: default
spec:
  cronSpec: "0 3 * * *"
  image: backup:1
---
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: hourly
  namespace: default
spec:
  cronSpec: "0 * * * *"
  image: report:2
  replicas: 2
`;

t.test('kubectl with a custom resource definition', { skip: noKubectl }, async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });
  const file = CRONTAB_CRD + INSTANCES;

  // As with the reference, the first apply creates the definition; the instances' kind is not known
  // yet when kubectl maps the file, so they wait for the second apply.
  const first = await kubectl(s, ['apply', '-f', '-'], { input: file });
  t.match(first.stdout, /customresourcedefinition.apiextensions.k8s.io\/crontabs.stable.example.com created/);
  t.match(first.stderr, /ensure CRDs are installed first/);
  const wait = await kubectl(s, ['wait', '--for', 'condition=established', '--timeout=20s', 'crd/crontabs.stable.example.com']);
  t.equal(wait.code, 0, wait.stderr);
  t.match(wait.stdout, /condition met/);
  const second = await kubectl(s, ['apply', '-f', '-'], { input: file });
  t.equal(second.code, 0, second.stderr);
  t.match(second.stdout, /crontab.stable.example.com\/nightly created/);
  t.match(second.stdout, /crontab.stable.example.com\/hourly created/);

  const get = await kubectl(s, ['get', 'ct']);
  t.equal(get.code, 0, get.stderr);
  const lines = get.stdout.trim().split('\n');
  t.match(lines[0], /^NAME\s+SCHEDULE\s+REPLICAS\s+AGE$/);
  t.match(get.stdout, /hourly\s+0 \* \* \* \*\s+2\s+\d+s/);
  t.match(get.stdout, /nightly\s+0 3 \* \* \*\s+1\s+\d+s/, 'defaulted replicas shown');

  const all = await kubectl(s, ['get', 'all']);
  t.match(all.stdout, /crontab.stable.example.com\/nightly/, 'category all includes the custom resource');

  const explain = await kubectl(s, ['explain', 'crontab.spec']);
  t.equal(explain.code, 0, explain.stderr);
  t.match(explain.stdout, /What to run and how often/);
  t.match(explain.stdout, /cronSpec\s+<string> -required-/);

  const scale = await kubectl(s, ['scale', 'crontab/nightly', '--replicas=4']);
  t.equal(scale.code, 0, scale.stderr);
  t.match((await kubectl(s, ['get', 'ct', 'nightly', '-o', 'jsonpath={.spec.replicas}'])).stdout, /^4$/);

  const bad = await kubectl(s, ['apply', '-f', '-'], { input: INSTANCES.replace('"0 3 * * *"', '"every night"').replace('backup:1', 'backup:2') });
  t.not(bad.code, 0);
  t.match(bad.stderr, /spec.cronSpec: Invalid value: "every night": spec.cronSpec in body should match/);

  const cel = await kubectl(s, ['apply', '-f', '-'], { input: INSTANCES.replace('replicas: 2', 'replicas: 9') });
  t.not(cel.code, 0);
  t.match(cel.stderr, /spec: Invalid value: "object": at most 8 replicas may run at once/, 'the CEL rule\'s message');

  const del = await kubectl(s, ['delete', 'crd', 'crontabs.stable.example.com']);
  t.equal(del.code, 0, del.stderr);
  const after = await kubectl(s, ['get', 'crontabs.stable.example.com', '-A']);
  t.not(after.code, 0, 'no longer served');
  const left = await s.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
  t.equal(left.json.items.length, 0);
});
