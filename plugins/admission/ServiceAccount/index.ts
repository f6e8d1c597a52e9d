// ServiceAccount: a new pod runs as spec.serviceAccountName ("default" when unset), which must exist.
// Unless automountServiceAccountToken is false (on the pod, or else on the account), the pod gets the
// projected API access volume <apiAccessVolumePrefix><5 random chars> (a bound token, the root CA
// config map, the namespace) mounted read-only at /var/run/secrets/<keyDomain>/serviceaccount in
// every container that has nothing mounted there; a pod without imagePullSecrets takes the account's.
// Mirror pods are left alone but may not reference accounts, secrets or token projections.
//
// Stand-in for the service-account controller this server lacks: the "default" account of a namespace
// is created when the namespace appears (option createDefaultServiceAccounts, default true) or when a
// pod first needs it.
import { randomInt } from 'node:crypto';
import { CONTRACT_VERSION, type AdmissionAttributes, type KObject, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';

type J = Record<string, any>;

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789'; // the reference's generated-name alphabet
const DEFAULT = 'default';


/** Names of every secret a pod refers to, with where it is referred from (for messages). */
function secretRefs(spec: J): { name: string; where: string }[] {
  const out: { name: string; where: string }[] = [];
  for (const v of spec.volumes ?? []) {
    if (v?.secret?.secretName) out.push({ name: v.secret.secretName, where: `volume with secret.secretName="${v.secret.secretName}"` });
    for (const s of v?.projected?.sources ?? []) if (s?.secret?.name) out.push({ name: s.secret.name, where: `volume with secret.secretName="${s.secret.name}"` });
  }
  for (const [kind, key] of [['init container', 'initContainers'], ['container', 'containers'], ['ephemeral container', 'ephemeralContainers']]) {
    for (const c of spec[key] ?? []) {
      for (const e of c?.env ?? []) {
        const n = e?.valueFrom?.secretKeyRef?.name;
        if (n) out.push({ name: n, where: `${kind} ${c.name} with envVar ${e.name} referencing secret.secretName="${n}"` });
      }
      for (const e of c?.envFrom ?? []) {
        const n = e?.secretRef?.name;
        if (n) out.push({ name: n, where: `${kind} ${c.name} with envFrom referencing secret.secretName="${n}"` });
      }
    }
  }
  return out;
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'ServiceAccount',
  create(options, host) {
    const kd = host.brand.keyDomain;
    const mirrorKey = `${kd}/config.mirror`;
    const mountPath = `/var/run/secrets/${kd}/serviceaccount`;
    const prefix = host.brand.apiAccessVolumePrefix;
    const rootCA = host.brand.name === 'kubernetes' ? 'kube-root-ca.crt' : 'root-ca.crt';
    const mountToken = options.mountServiceAccountToken !== false;
    const saType = () => host.type('', 'serviceaccounts');
    const nsType = () => host.type('', 'namespaces');

    async function ensureDefault(namespace: string): Promise<KObject | undefined> {
      const t = saType();
      if (!t) return undefined;
      for (let attempt = 1; attempt <= 10; attempt++) {
        const found = await host.objects.get(t, namespace, DEFAULT);
        if (found) return found;
        try {
          return await host.objects.create(t, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT, namespace } });
        } catch (e) {
          if ((e as { code?: number }).code !== 409) return undefined; // e.g. the namespace is going away
        }
        // created concurrently and not readable yet: look again shortly
        await new Promise((r) => setTimeout(r, 10 * attempt));
      }
      return undefined;
    }

    let unwatch: (() => void) | undefined;
    if (options.createDefaultServiceAccounts !== false) {
      const t = nsType();
      if (t) {
        unwatch = host.objects.watch(t, (ev, ns) => {
          const name = ns.metadata?.name;
          if (ev !== 'ADDED' || !name || ns.metadata?.deletionTimestamp) return;
          setImmediate(() => {
            const sa = saType();
            if (sa) void host.objects.get(sa, name, DEFAULT).then((got) => got ?? ensureDefault(name)).catch(() => undefined);
          });
        });
      }
    }

    async function lookup(a: AdmissionAttributes, name: string): Promise<J> {
      const t = saType();
      const found = t && (await host.objects.get(t, a.namespace, name));
      if (found) return found;
      const ns = nsType();
      if (ns && !(await host.objects.get(ns, '', a.namespace))) throw host.errors.notFound('', 'namespaces', a.namespace);
      const made = name === DEFAULT ? await ensureDefault(a.namespace) : undefined;
      if (made) return made;
      throw host.errors.admissionForbidden(a, `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
    }

    function volume(name: string): J {
      return {
        name,
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: rootCA, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      };
    }

    function mount(spec: J) {
      const volumes: J[] = Array.isArray(spec.volumes) ? spec.volumes : [];
      const existing = volumes.find((v) => typeof v?.name === 'string' && v.name.startsWith(prefix));
      const name = existing?.name ?? prefix + Array.from({ length: 5 }, () => NAME_CHARS[randomInt(NAME_CHARS.length)]).join('');
      let needed = false;
      for (const key of ['initContainers', 'containers']) {
        for (const c of Array.isArray(spec[key]) ? spec[key] : []) {
          const mounts: J[] = Array.isArray(c.volumeMounts) ? c.volumeMounts : [];
          if (mounts.some((m) => m?.mountPath === mountPath)) continue;
          c.volumeMounts = [...mounts, { name, readOnly: true, mountPath }];
          needed = true;
        }
      }
      if (needed && !existing) spec.volumes = [...volumes, volume(name)];
    }

    return {
      handles: (op, a) => op === 'CREATE' && a.resource.group === '' && a.resource.resource === 'pods' && !a.subresource,
      close: async () => unwatch?.(),
      async admit(a) {
        const pod = a.object as J;
        if (pod.metadata?.annotations?.[mirrorKey] !== undefined) return; // the node agent would reject a changed spec
        const spec: J = pod.spec ?? (pod.spec = {});
        if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount = DEFAULT; // with its deprecated alias, as the reference writes both
        const sa = await lookup(a, spec.serviceAccountName);
        const automount = spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
        if (mountToken && automount) mount(spec);
        if (!Array.isArray(spec.imagePullSecrets) || !spec.imagePullSecrets.length) {
          const pulls = (sa.imagePullSecrets ?? []).filter((s: J) => s?.name).map((s: J) => ({ name: s.name }));
          if (pulls.length) spec.imagePullSecrets = pulls;
        }
      },
      async validate(a) {
        const pod = a.object as J;
        const spec: J = pod.spec ?? {};
        if (pod.metadata?.annotations?.[mirrorKey] !== undefined) {
          if (spec.serviceAccountName) throw host.errors.admissionForbidden(a, 'a mirror pod may not reference service accounts');
          if (secretRefs(spec).length || spec.imagePullSecrets?.length) throw host.errors.admissionForbidden(a, 'a mirror pod may not reference secrets');
          if ((spec.volumes ?? []).some((v: J) => (v?.projected?.sources ?? []).some((s: J) => s?.serviceAccountToken))) {
            throw host.errors.admissionForbidden(a, 'a mirror pod may not use ServiceAccountToken volume projections');
          }
          return;
        }
        if (!spec.serviceAccountName) throw host.errors.admissionForbidden(a, `no service account specified for pod ${a.namespace}/${a.name}`);
        const sa = await lookup(a, spec.serviceAccountName);
        // accounts annotated <keyDomain>/enforce-mountable-secrets limit pods to the secrets they list
        if (sa.metadata?.annotations?.[`${kd}/enforce-mountable-secrets`] !== 'true') return;
        const mountable = new Set((sa.secrets ?? []).map((s: J) => s?.name));
        for (const ref of secretRefs(spec)) {
          if (!mountable.has(ref.name)) throw host.errors.admissionForbidden(a, `${ref.where} is not allowed because service account ${sa.metadata.name} does not reference that secret`);
        }
        const pullable = new Set((sa.imagePullSecrets ?? []).map((s: J) => s?.name));
        for (const p of spec.imagePullSecrets ?? []) {
          if (!pullable.has(p?.name)) throw host.errors.admissionForbidden(a, `pull secret ${p?.name} is not allowed because service account ${sa.metadata.name} does not reference that imagePullSecret`);
        }
      },
    };
  },
};
export default plugin;
