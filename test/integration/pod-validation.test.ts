// The reference's pod spec rules (issue 30): pods and pod templates it refuses with 422 are refused
// here with the same causes (field, reason, message, in its order), and nothing is stored.
import t from 'tap';
import { withServer } from '../lib/server.js';

type Cause = { reason: string; field: string; message: string };
const container = (more: Record<string, unknown> = {}) => ({ name: 'c', image: 'busybox', ...more });
const pod = (name: string, spec: Record<string, unknown>) => ({ metadata: { name }, spec: { containers: [container()], ...spec } });
const inv = (field: string, message: string): Cause => ({ reason: 'FieldValueInvalid', field, message });
const unsupported = (field: string, message: string): Cause => ({ reason: 'FieldValueNotSupported', field, message });
const LABEL_KEY_ERROR = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** The issue's probes: each pod, and the causes the reference answers with. */
const PROBES: [string, Record<string, unknown>, Cause[]][] = [
  ['request-over-limit', { containers: [container({ resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } })] },
    [inv('spec.containers[0].resources.requests', 'Invalid value: "2": must be less than or equal to cpu limit of 1')]],
  ['unknown-resource', { containers: [container({ resources: { limits: { foo: '1' } } })] }, [
    inv('spec.containers[0].resources.limits[foo]', 'Invalid value: "foo": must be a standard resource type or fully qualified'),
    inv('spec.containers[0].resources.limits[foo]', 'Invalid value: "foo": must be a standard resource for containers'),
    // defaulting copies a pod's limits into absent requests, so the name is reported twice
    inv('spec.containers[0].resources.requests[foo]', 'Invalid value: "foo": must be a standard resource type or fully qualified'),
    inv('spec.containers[0].resources.requests[foo]', 'Invalid value: "foo": must be a standard resource for containers'),
  ]],
  ['pull-policy', { containers: [container({ imagePullPolicy: 'Sometimes' })] },
    [unsupported('spec.containers[0].imagePullPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"')]],
  ['toleration-operator', { tolerations: [{ key: 'k', operator: 'Maybe' }] },
    [unsupported('spec.tolerations[0].operator', 'Unsupported value: "Maybe": supported values: "Equal", "Exists"')]],
  ['deadline-zero', { activeDeadlineSeconds: 0 },
    [inv('spec.activeDeadlineSeconds', 'Invalid value: 0: must be between 1 and 2147483647, inclusive')]],
  ['host-alias-ip', { hostAliases: [{ ip: '999.1.1.1', hostnames: ['a'] }] },
    [inv('spec.hostAliases.ip', 'Invalid value: "999.1.1.1": must be valid IP address')]],
  ['node-selector-key', { nodeSelector: { 'bad key': 'v' } },
    [inv('spec.nodeSelector', `Invalid value: "bad key": ${LABEL_KEY_ERROR}`)]],
  ['env-name', { containers: [container({ env: [{ name: '1=bad', value: 'x' }] })] },
    [inv('spec.containers[0].env[0].name', "Invalid value: \"1=bad\": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")]],
  ['probe-port', { containers: [container({ livenessProbe: { tcpSocket: { port: 0 } } })] },
    [inv('spec.containers[0].livenessProbe.tcpSocket.port', 'Invalid value: 0: must be between 1 and 65535, inclusive')]],
  ['run-as-user', { securityContext: { runAsUser: -1 } },
    [inv('spec.securityContext.runAsUser', 'Invalid value: -1: must be between 0 and 2147483647, inclusive')]],
  ['empty-dir-size', { volumes: [{ name: 'v', emptyDir: { sizeLimit: '-1Gi' } }] },
    [{ reason: 'FieldValueForbidden', field: 'spec.volumes[0].emptyDir.sizeLimit', message: 'Forbidden: SizeLimit field must be a valid resource quantity' }]],
];

const message = (kind: string, name: string, causes: Cause[]) =>
  `${kind} "${name}" is invalid: ${causes.length === 1 ? `${causes[0].field}: ${causes[0].message}` : `[${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}]`}`;

t.test('pod spec rules over HTTP', async (t) => {
  const s = await withServer(t, { brand: 'kubernetes' });

  for (const [name, spec, causes] of PROBES) {
    await t.test(name, async (t) => {
      const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod(name, spec) });
      t.equal(r.status, 422, r.text);
      t.same(r.json.details.causes, causes);
      t.equal(r.json.message, message('Pod', name, causes));
      t.equal((await s.get(`/api/v1/namespaces/default/pods/${name}`)).status, 404, 'nothing stored');
    });
  }

  await t.test('a Deployment whose template asks for cpu -3', async (t) => {
    const body = {
      metadata: { name: 'neg' },
      spec: { selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [container({ resources: { requests: { cpu: '-3' } } })] } } },
    };
    const r = await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body });
    t.equal(r.status, 422, r.text);
    t.same(r.json.details.causes, [inv('spec.template.spec.containers[0].resources.requests[cpu]', 'Invalid value: "-3": must be greater than or equal to 0')]);
    t.equal((await s.get('/apis/apps/v1/namespaces/default/deployments/neg')).status, 404, 'nothing stored');
  });

  await t.test('a pod using most of the spec passes', async (t) => {
    const spec = {
      volumes: [{ name: 'data', emptyDir: { sizeLimit: '1Gi' } }, { name: 'cfg', configMap: { name: 'c', items: [{ key: 'k', path: 'k' }] } },
        { name: 'dw', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } }],
      containers: [container({
        resources: { requests: { cpu: '100m', memory: '64Mi', 'example.com/gpu': '1' }, limits: { cpu: '1', memory: '128Mi', 'example.com/gpu': '1', 'hugepages-2Mi': '4Mi' } },
        env: [{ name: 'A', value: 'b' }, { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }, { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } }],
        envFrom: [{ prefix: 'P_', configMapRef: { name: 'c' } }],
        volumeMounts: [{ name: 'data', mountPath: '/data', subPath: 'x' }, { name: 'cfg', mountPath: '/cfg' }],
        ports: [{ containerPort: 80, name: 'http' }],
        livenessProbe: { httpGet: { port: 'http', path: '/' } }, readinessProbe: { exec: { command: ['true'] } },
        securityContext: { runAsUser: 1000, allowPrivilegeEscalation: false },
      })],
      initContainers: [container({ name: 'init' })],
      tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 5 }, { operator: 'Exists' }],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } },
        podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { a: 'b' } } } }] } },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { a: 'b' } } }],
      hostAliases: [{ ip: '10.0.0.1', hostnames: ['db.local'] }], nodeSelector: { disk: 'ssd' }, activeDeadlineSeconds: 60,
      securityContext: { runAsUser: 0, fsGroup: 2000, supplementalGroups: [1], sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '1 2' }] },
      dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['svc.local.'] }, hostname: 'h', subdomain: 's', os: { name: 'linux' },
    };
    const r = await s.request('POST', '/api/v1/namespaces/default/pods', { body: pod('full', spec) });
    t.equal(r.status, 201, r.text);
  });
});
