// The Pod Security Standards as checks on a pod spec: each check has the reference's id, level,
// reason and detail wording. A restricted check that overrides a baseline one replaces it. Checks
// are reported in the reference's order: baseline ones, then restricted ones, each by id.
type J = Record<string, any>;

export type Level = 'privileged' | 'baseline' | 'restricted';

export interface Violation { reason: string; detail: string }

/** One implementation of a check, applied from a policy version on (v1.<since>) until a later one replaces it. */
interface Variant {
  since: number;
  run(pod: PodView): Violation | undefined;
  /** Baseline check ids this one replaces at its level, for the versions it applies to. */
  overrides?: string[];
}

interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** Oldest first. A version older than the first variant does not have the check. */
  versions: Variant[];
}

export interface PodView {
  spec: J;
  meta: J;
  containers: J[]; // containers, initContainers and ephemeralContainers
}

const list = (v: unknown): J[] => (Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') : []);
const q = (s: string) => JSON.stringify(s);
const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);
/** `container "a"` / `containers "a", "b"`. */
const named = (word: string, names: string[]) => `${plural(names.length, word, `${word}s`)} ${names.map(q).join(', ')}`;

export function podView(spec: J, meta: J = {}): PodView {
  return { spec, meta, containers: [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)] };
}

const sc = (c: J): J => (c.securityContext && typeof c.securityContext === 'object' ? c.securityContext : {});
const psc = (p: PodView): J => (p.spec.securityContext && typeof p.spec.securityContext === 'object' ? p.spec.securityContext : {});

const BASELINE_CAPS = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
const RESTRICTED_VOLUME_OK = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);

/** Parts of a message naming who set a bad value: "pod", `container "a"`, `containers "a", "b"`, joined with " and ". */
function setters(pod: boolean, containers: string[]): string {
  return [pod ? 'pod' : '', containers.length ? named('container', containers) : ''].filter(Boolean).join(' and ');
}
const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
/** From v1.25 the checks that cannot apply to Windows pods (spec.os.name) let them through. */
const notOnWindows = (run: Check['versions'][number]['run']) => (p: PodView) => (p.spec.os?.name === 'windows' ? undefined : run(p));

const validSeccomp = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION = 'container.seccomp.security.alpha.kubernetes.io/';

function sysctls(allowed: Set<string>) {
  return (p: PodView): Violation | undefined => {
    const bad = list(psc(p).sysctls).map((s) => s.name).filter((n) => !allowed.has(n));
    return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
  };
}

function capabilitiesRestricted(p: PodView): Violation | undefined {
  const noDrop = p.containers.filter((c) => !(sc(c).capabilities?.drop ?? []).includes('ALL')).map((c) => c.name);
  const adders: string[] = [];
  const caps: string[] = [];
  for (const c of p.containers) {
    const added = (sc(c).capabilities?.add ?? []).filter((x: string) => x !== 'NET_BIND_SERVICE');
    if (added.length) { adders.push(c.name); caps.push(...added); }
  }
  const out: string[] = [];
  if (noDrop.length) out.push(`${named('container', noDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adders.length) out.push(`${named('container', adders)} must not include ${sorted(caps).map(q).join(', ')} in securityContext.capabilities.add`);
  return out.length ? { reason: 'unrestricted capabilities', detail: out.join('; ') } : undefined;
}

function allowPrivilegeEscalation(p: PodView): Violation | undefined {
  const bad = p.containers.filter((c) => sc(c).allowPrivilegeEscalation !== false).map((c) => c.name);
  return bad.length ? { reason: 'allowPrivilegeEscalation != false', detail: `${named('container', bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
}

function seccompRestricted(p: PodView): Violation | undefined {
  const podType = psc(p).seccompProfile?.type;
  const podBad = psc(p).seccompProfile && !validSeccomp(podType);
  const podSet = psc(p).seccompProfile && validSeccomp(podType);
  const explicit = p.containers.filter((c) => sc(c).seccompProfile && !validSeccomp(sc(c).seccompProfile.type));
  if (podBad || explicit.length) {
    const values = sorted([...(podBad ? [String(podType ?? '')] : []), ...explicit.map((c) => String(sc(c).seccompProfile.type ?? ''))]);
    return { reason: 'seccompProfile', detail: `${setters(!!podBad, explicit.map((c) => c.name))} must not set securityContext.seccompProfile.type to ${values.map(q).join(', ')}` };
  }
  const unset = podSet ? [] : p.containers.filter((c) => !sc(c).seccompProfile).map((c) => c.name);
  return unset.length ? { reason: 'seccompProfile', detail: `pod or ${named('container', unset)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` } : undefined;
}

const SYSCTLS_1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];

// The reference policy package's checks, each with the versions its behaviour changed in.
const CHECKS: Check[] = [
  // ---------------------------------------------------------------- baseline
  { id: 'appArmorProfile', level: 'baseline', versions: [{ since: 0, run(p) {
    const bad = Object.entries((p.meta.annotations ?? {}) as Record<string, string>)
      .filter(([k, v]) => k.startsWith('container.apparmor.security.beta.kubernetes.io/') && v !== '' && v !== 'runtime/default' && !v.startsWith('localhost/'))
      .map(([k, v]) => `${k}=${q(v)}`).sort();
    return bad.length ? { reason: plural(bad.length, 'forbidden AppArmor profile', 'forbidden AppArmor profiles'), detail: bad.join(', ') } : undefined;
  } }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ since: 0, run(p) {
    const bad: string[] = [];
    const caps: string[] = [];
    for (const c of p.containers) {
      const added = (sc(c).capabilities?.add ?? []).filter((x: string) => !BASELINE_CAPS.has(x));
      if (added.length) { bad.push(c.name); caps.push(...added); }
    }
    return bad.length ? { reason: 'non-default capabilities', detail: `${named('container', bad)} must not include ${sorted(caps).map(q).join(', ')} in securityContext.capabilities.add` } : undefined;
  } }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ since: 0, run(p) {
    const on = ['hostNetwork', 'hostPID', 'hostIPC'].filter((k) => p.spec[k] === true);
    return on.length ? { reason: 'host namespaces', detail: on.map((k) => `${k}=true`).join(', ') } : undefined;
  } }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ since: 0, run(p) {
    const bad = list(p.spec.volumes).filter((v) => v.hostPath).map((v) => v.name);
    return bad.length ? { reason: 'hostPath volumes', detail: named('volume', bad) } : undefined;
  } }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ since: 0, run(p) {
    const bad: string[] = [];
    const ports: number[] = [];
    for (const c of p.containers) {
      const hp = list(c.ports).map((x) => x.hostPort).filter((x) => typeof x === 'number' && x !== 0);
      if (hp.length) { bad.push(c.name); ports.push(...hp); }
    }
    return bad.length ? { reason: 'hostPort', detail: `${named('container', bad)} ${plural(bad.length, 'uses', 'use')} ${plural(ports.length, 'hostPort', 'hostPorts')} ${ports.join(', ')}` } : undefined;
  } }] },
  { id: 'privileged', level: 'baseline', versions: [{ since: 0, run(p) {
    const bad = p.containers.filter((c) => sc(c).privileged === true).map((c) => c.name);
    return bad.length ? { reason: 'privileged', detail: `${named('container', bad)} must not set securityContext.privileged=true` } : undefined;
  } }] },
  { id: 'procMount', level: 'baseline', versions: [{ since: 0, run(p) {
    const bad = p.containers.filter((c) => sc(c).procMount !== undefined && sc(c).procMount !== 'Default');
    return bad.length ? { reason: 'procMount', detail: `${named('container', bad.map((c) => c.name))} ${plural(bad.length, 'sets', 'set')} procMount to ${[...new Set(bad.map((c) => q(sc(c).procMount)))].join(', ')}` } : undefined;
  } }] },
  { id: 'seccompProfile_baseline', level: 'baseline', versions: [
    // Before the field (v1.19), the alpha annotations.
    { since: 0, run(p) {
      const ann = (p.meta.annotations ?? {}) as Record<string, string>;
      const ok = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
      const bad: string[] = [];
      if (SECCOMP_POD_ANNOTATION in ann && !ok(ann[SECCOMP_POD_ANNOTATION])) bad.push(`${SECCOMP_POD_ANNOTATION}=${q(ann[SECCOMP_POD_ANNOTATION])}`);
      for (const c of p.containers) {
        const k = SECCOMP_CONTAINER_ANNOTATION + c.name;
        if (k in ann && !ok(ann[k])) bad.push(`${k}=${q(ann[k])}`);
      }
      const list = sorted(bad);
      return list.length ? { reason: 'seccompProfile', detail: `forbidden ${plural(list.length, 'annotation', 'annotations')} ${list.join(', ')}` } : undefined;
    } },
    { since: 19, run(p) {
      const pod = !!psc(p).seccompProfile && !validSeccomp(psc(p).seccompProfile.type);
      const bad = p.containers.filter((c) => sc(c).seccompProfile && !validSeccomp(sc(c).seccompProfile.type));
      if (!pod && !bad.length) return undefined;
      const values = sorted([...(pod ? [String(psc(p).seccompProfile.type ?? '')] : []), ...bad.map((c) => String(sc(c).seccompProfile.type ?? ''))]);
      return { reason: 'seccompProfile', detail: `${setters(pod, bad.map((c) => c.name))} must not set securityContext.seccompProfile.type to ${values.map(q).join(', ')}` };
    } },
  ] },
  { id: 'seLinuxOptions', level: 'baseline', versions: [{ since: 0, run(p) {
    const ok = (o: J | undefined) => !o || ((!o.type || ['container_t', 'container_init_t', 'container_kvm_t'].includes(o.type)) && !o.user && !o.role);
    const bad = p.containers.filter((c) => !ok(sc(c).seLinuxOptions)).map((c) => c.name);
    if (!ok(psc(p).seLinuxOptions) || bad.length) return { reason: 'seLinuxOptions', detail: setters(!ok(psc(p).seLinuxOptions), bad) + ' set forbidden securityContext.seLinuxOptions' };
    return undefined;
  } }] },
  { id: 'sysctls', level: 'baseline', versions: [
    { since: 0, run: sysctls(new Set(SYSCTLS_1_0)) },
    { since: 27, run: sysctls(new Set(SYSCTLS_1_27)) },
    { since: 29, run: sysctls(new Set(SYSCTLS_1_29)) },
  ] },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ since: 0, run(p) {
    const bad = p.containers.filter((c) => sc(c).windowsOptions?.hostProcess === true).map((c) => c.name);
    const pod = psc(p).windowsOptions?.hostProcess === true;
    if (pod || bad.length) return { reason: 'hostProcess', detail: `${setters(pod, bad)} must not set securityContext.windowsOptions.hostProcess=true` };
    return undefined;
  } }] },
  // ---------------------------------------------------------------- restricted
  { id: 'allowPrivilegeEscalation', level: 'restricted', versions: [
    { since: 8, run: allowPrivilegeEscalation },
    { since: 25, run: notOnWindows(allowPrivilegeEscalation) },
  ] },
  { id: 'capabilities_restricted', level: 'restricted', versions: [
    { since: 22, run: capabilitiesRestricted, overrides: ['capabilities_baseline'] },
    { since: 25, run: notOnWindows(capabilitiesRestricted), overrides: ['capabilities_baseline'] },
  ] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ since: 0, overrides: ['hostPathVolumes'], run(p) {
    const bad = list(p.spec.volumes).map((v) => [v.name, Object.keys(v).find((k) => k !== 'name')] as [string, string | undefined]).filter(([, t]) => t && !RESTRICTED_VOLUME_OK.has(t));
    if (!bad.length) return undefined;
    const types = [...new Set(bad.map(([, t]) => t!))];
    return { reason: 'restricted volume types', detail: `${named('volume', bad.map(([n]) => n))} ${plural(bad.length, 'uses', 'use')} ${plural(types.length, 'restricted volume type', 'restricted volume types')} ${types.map(q).join(', ')}` };
  } }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ since: 0, run(p) {
    const podSet = psc(p).runAsNonRoot;
    const explicitFalse = p.containers.filter((c) => sc(c).runAsNonRoot === false).map((c) => c.name);
    if (podSet === false || explicitFalse.length) return { reason: 'runAsNonRoot != true', detail: `${setters(podSet === false, explicitFalse)} must not set securityContext.runAsNonRoot=false` };
    const unset = podSet === true ? [] : p.containers.filter((c) => sc(c).runAsNonRoot === undefined || sc(c).runAsNonRoot === null).map((c) => c.name);
    return unset.length ? { reason: 'runAsNonRoot != true', detail: `pod or ${named('container', unset)} must set securityContext.runAsNonRoot=true` } : undefined;
  } }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ since: 23, run(p) {
    const pod = psc(p).runAsUser === 0;
    const bad = p.containers.filter((c) => sc(c).runAsUser === 0).map((c) => c.name);
    return pod || bad.length ? { reason: 'runAsUser=0', detail: `${setters(pod, bad)} must not set runAsUser=0` } : undefined;
  } }] },
  { id: 'seccompProfile_restricted', level: 'restricted', versions: [
    { since: 19, run: seccompRestricted, overrides: ['seccompProfile_baseline'] },
    { since: 25, run: notOnWindows(seccompRestricted), overrides: ['seccompProfile_baseline'] },
  ] },
];

/** A policy version: the minor release of v1 ("v1.24" → 24); "latest" is the newest this server knows. */
export type PolicyVersion = number;

/** "latest" or "v1.<minor>" as the reference's labels write them; undefined when not a version. */
export function parseVersion(v: string, latest: PolicyVersion): PolicyVersion | undefined {
  if (v === 'latest') return latest;
  const m = /^v1\.(0|[1-9]\d{0,3})$/.exec(v);
  return m ? Math.min(Number(m[1]), latest) : undefined;
}

/** The variant of a check that applies at a version, if the check exists then. */
function variantAt(c: Check, version: PolicyVersion): Variant | undefined {
  let found: Variant | undefined;
  for (const v of c.versions) if (v.since <= version) found = v;
  return found;
}

/** The checks of a level at a version, in the order the reference reports them. */
function checksFor(level: Level, version: PolicyVersion): Variant[] {
  if (level === 'privileged') return [];
  const wanted = CHECKS.filter((c) => c.level === 'baseline' || level === 'restricted')
    .map((c) => [c, variantAt(c, version)] as const).filter((x): x is readonly [Check, Variant] => x[1] !== undefined);
  const overridden = new Set(wanted.flatMap(([, v]) => v.overrides ?? []));
  return wanted.filter(([c]) => !overridden.has(c.id)).map(([, v]) => v);
}

/** Violations of a pod against a level at a policy version; empty when it complies. */
export function evaluate(level: Level, pod: PodView, version: PolicyVersion = LATEST): Violation[] {
  const out: Violation[] = [];
  for (const c of checksFor(level, version)) {
    const v = c.run(pod);
    if (v) out.push(v);
  }
  return out;
}

/** The newest policy version the checks know. */
export const NEWEST: PolicyVersion = Math.max(...CHECKS.flatMap((c) => c.versions.map((v) => v.since)));
/** "latest" by default: the reference release this server follows (v1.28). */
export const LATEST: PolicyVersion = 28;

/** "privileged (container "c" must not set ...), allowPrivilegeEscalation != false (...)". */
export function describe(vs: Violation[]): string {
  return vs.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
}
