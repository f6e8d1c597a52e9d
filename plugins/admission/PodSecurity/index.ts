// PodSecurity: the Pod Security Standards (privileged, baseline, restricted) per namespace, from the
// labels pod-security.<keys domain>/{enforce,audit,warn}[-version], defaulting to the admission
// configuration's `defaults` (privileged:latest). Pods that violate the enforce level are refused;
// audit and warn levels add an audit annotation and a Warning; workload templates are warned about
// and audited, never refused; exempt users, runtime classes and namespaces are not checked. Changing
// a namespace's enforce label warns about the pods already there that violate it.
// The -version labels pin the standards of a release ("v1.24"): checks added or changed later do not
// apply (restricted seccomp from v1.19, capabilities from v1.22, runAsUser from v1.23, Windows pods
// let through from v1.25, ...); "latest" is the release this server follows (option
// `latestVersion`, default v1.28). An unreadable level counts as restricted and an unreadable
// version as latest (fail closed), as the reference does.
import { CONTRACT_VERSION, type AdmissionAttributes, type FieldCause, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';
import { describe, evaluate, LATEST, NEWEST, parseVersion, podView, type Level, type PodView, type PolicyVersion } from './checks.js';

type J = Record<string, any>;
type Mode = 'enforce' | 'audit' | 'warn';
const MODES: Mode[] = ['enforce', 'audit', 'warn'];
const LEVELS: Level[] = ['privileged', 'baseline', 'restricted'];

interface Options {
  defaults?: Partial<Record<Mode | `${Mode}-version`, string>>;
  exemptions?: { usernames?: string[]; runtimeClasses?: string[]; namespaces?: string[] };
  /** What "latest" means ("v1.28" by default: the reference release this server follows). */
  latestVersion?: string;
}

interface ModePolicy { level: Level; version: string; at: PolicyVersion }

/** Workload resources whose pod template is checked (warn and audit only), by group and resource, with the template's path. */
const TEMPLATES: Record<string, string> = {
  '/podtemplates': 'template',
  '/replicationcontrollers': 'spec.template',
  'apps/deployments': 'spec.template',
  'apps/replicasets': 'spec.template',
  'apps/statefulsets': 'spec.template',
  'apps/daemonsets': 'spec.template',
  'batch/jobs': 'spec.template',
  'batch/cronjobs': 'spec.jobTemplate.spec.template',
};

const TEMPLATE_RESOURCES = new Set(Object.keys(TEMPLATES).map((k) => k.slice(k.indexOf('/') + 1)));

const at = (o: unknown, p: string): unknown => p.split('.').reduce<unknown>((c, k) => (c && typeof c === 'object' ? (c as J)[k] : undefined), o);

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'PodSecurity',
  create(options, host) {
    const o = options as Options;
    const prefix = `pod-security.${host.brand.keyDomain}/`;
    const exempt = { users: new Set(o.exemptions?.usernames ?? []), runtimeClasses: new Set(o.exemptions?.runtimeClasses ?? []), namespaces: new Set(o.exemptions?.namespaces ?? []) };
    const nsType = () => host.type('', 'namespaces');
    const podType = () => host.type('', 'pods');

    const latest = o.latestVersion ? parseVersion(o.latestVersion, NEWEST) ?? LATEST : LATEST;

    /** The level and version of each mode for a namespace's labels; unknown levels count as restricted, unknown versions as latest (fail closed). */
    function policy(labels: Record<string, string>): Record<Mode, ModePolicy> {
      const out = {} as Record<Mode, ModePolicy>;
      for (const m of MODES) {
        const raw = labels[prefix + m] ?? o.defaults?.[m] ?? 'privileged';
        const level = (LEVELS as string[]).includes(raw) ? (raw as Level) : 'restricted';
        const v = labels[`${prefix}${m}-version`] ?? o.defaults?.[`${m}-version`] ?? 'latest';
        const at = parseVersion(v, latest);
        out[m] = at === undefined ? { level, version: 'latest', at: latest } : { level, version: v, at };
      }
      return out;
    }
    const label = (p: ModePolicy) => `${p.level}:${p.version}`;

    async function namespaceLabels(ns: string): Promise<Record<string, string>> {
      const t = nsType();
      const n = t ? await host.objects.get(t, '', ns) : undefined;
      return (n?.metadata?.labels ?? {}) as Record<string, string>;
    }

    /** The pod (or template) this request is about, or undefined when nothing is to be checked. */
    function subject(a: AdmissionAttributes): { view: PodView; enforce: boolean } | undefined {
      const obj = a.object as J | undefined;
      if (!obj) return undefined;
      if (a.resource.group === '' && a.resource.resource === 'pods') {
        // Pod updates change nothing the standards look at, except ephemeral containers.
        if (a.operation === 'UPDATE' && a.subresource !== 'ephemeralcontainers') return undefined;
        if (a.subresource && a.subresource !== 'ephemeralcontainers') return undefined;
        return { view: podView(obj.spec ?? {}, obj.metadata ?? {}), enforce: true };
      }
      const path = TEMPLATES[`${a.resource.group}/${a.resource.resource}`];
      if (!path || a.subresource) return undefined;
      const tpl = at(obj, path) as J | undefined;
      if (!tpl) return undefined;
      return { view: podView(tpl.spec ?? {}, tpl.metadata ?? {}), enforce: false };
    }

    async function checkPod(a: AdmissionAttributes) {
      const s = subject(a);
      if (!s) return;
      if (exempt.namespaces.has(a.namespace) || exempt.users.has(a.user.username)) return;
      if (s.view.spec.runtimeClassName && exempt.runtimeClasses.has(s.view.spec.runtimeClassName)) return;
      const pol = policy(await namespaceLabels(a.namespace));
      if (s.enforce) a.annotate?.(`${prefix}enforce-policy`, label(pol.enforce));
      if (s.enforce) {
        const v = evaluate(pol.enforce.level, s.view, pol.enforce.at);
        if (v.length) throw host.errors.admissionForbidden(a, `violates PodSecurity ${JSON.stringify(label(pol.enforce))}: ${describe(v)}`);
      }
      const audit = evaluate(pol.audit.level, s.view, pol.audit.at);
      if (audit.length) a.annotate?.(`${prefix}audit-violations`, `would violate PodSecurity ${JSON.stringify(label(pol.audit))}: ${describe(audit)}`);
      // A template is warned about at the enforce level too: its pods would be refused.
      const warnAt = s.enforce ? [pol.warn] : [pol.warn, pol.enforce];
      const seen = new Set<string>();
      for (const p of warnAt) {
        if (seen.has(label(p))) continue;
        seen.add(label(p));
        const w = evaluate(p.level, s.view, p.at);
        if (w.length) a.warn?.(`would violate PodSecurity ${JSON.stringify(label(p))}: ${describe(w)}`);
      }
    }

    /** A stricter enforce label on a namespace: warn about the pods already there that it would refuse. */
    /** The namespace's pod-security labels that are not a level or a version, as the reference reports them. */
    function labelErrors(labels: Record<string, string>): FieldCause[] {
      const out: FieldCause[] = [];
      const bad = (k: string, detail: string) => out.push({ reason: 'FieldValueInvalid', field: `metadata.labels[${k}]`, message: `Invalid value: ${JSON.stringify(labels[k])}: ${detail}` });
      for (const m of MODES) {
        if (prefix + m in labels && !(LEVELS as string[]).includes(labels[prefix + m])) bad(prefix + m, 'must be one of privileged, baseline, restricted');
        const vk = `${prefix}${m}-version`;
        if (vk in labels && parseVersion(labels[vk], latest) === undefined) bad(vk, 'must be "latest" or "v1.x"');
      }
      return out;
    }

    async function checkNamespace(a: AdmissionAttributes) {
      if (a.subresource) return;
      // Labels must be readable: on create, and on an update that changes what is wrong with them.
      const errs = labelErrors(((a.object as KObject).metadata?.labels ?? {}) as Record<string, string>);
      if (errs.length && (a.operation === 'CREATE' || JSON.stringify(errs) !== JSON.stringify(labelErrors(((a.oldObject as KObject | undefined)?.metadata?.labels ?? {}) as Record<string, string>)))) {
        throw host.errors.invalid('Namespace', a.name || (a.object as KObject).metadata?.name || '', errs);
      }
      if (a.operation !== 'UPDATE') return;
      const now = policy(((a.object as KObject).metadata?.labels ?? {}) as Record<string, string>).enforce;
      const before = policy(((a.oldObject as KObject | undefined)?.metadata?.labels ?? {}) as Record<string, string>).enforce;
      if (label(now) === label(before) || now.level === 'privileged' || exempt.namespaces.has(a.name)) return;
      const pt = podType();
      if (!pt) return;
      const bad: string[] = [];
      for (const p of await host.objects.list(pt, a.name)) {
        if (exempt.runtimeClasses.has((p.spec as J | undefined)?.runtimeClassName)) continue;
        const v = evaluate(now.level, podView((p.spec ?? {}) as J, (p.metadata ?? {}) as J), now.at);
        if (v.length) bad.push(`${p.metadata!.name}: ${v.map((x) => x.reason).join(', ')}`);
      }
      if (!bad.length) return;
      a.warn?.(`existing pods in namespace ${JSON.stringify(a.name)} violate the new PodSecurity enforce level ${JSON.stringify(label(now))}`);
      for (const b of bad) a.warn?.(b);
    }

    return {
      handles: (op, a) => (op === 'CREATE' || op === 'UPDATE') && (a.resource.group === '' && a.resource.resource === 'namespaces' || !!subjectKey(a)),
      async validate(a) {
        if (a.resource.group === '' && a.resource.resource === 'namespaces') return checkNamespace(a);
        return checkPod(a);
      },
    };
  },
};

function subjectKey(a: AdmissionAttributes): boolean {
  // (asked on every write: no string is built for resources that have no template)
  return (a.resource.group === '' && a.resource.resource === 'pods') || (TEMPLATE_RESOURCES.has(a.resource.resource) && `${a.resource.group}/${a.resource.resource}` in TEMPLATES);
}

export default plugin;
