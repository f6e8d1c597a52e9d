// The Pod Security Standards as checks on a pod spec: each check has the reference's id, level,
// reason and detail wording. A restricted check that overrides a baseline one replaces it. Checks
// are reported in the reference's order: baseline ones, then restricted ones, each by id.
type J = Record<string, any>;

export type Level = 'privileged' | 'baseline' | 'restricted';

export interface Violation { reason: string; detail: string }

interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** Baseline check ids this one replaces at its level. */
  overrides?: string[];
  run(pod: PodView): Violation | undefined;
}

/** The parts of a pod (or pod template) the checks read. */
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

const CHECKS: Check[] = [
  // ---------------------------------------------------------------- baseline
  { id: 'appArmorProfile', level: 'baseline', run(p) {
    const bad = Object.entries((p.meta.annotations ?? {}) as Record<string, string>)
      .filter(([k, v]) => k.startsWith('container.apparmor.security.beta.kubernetes.io/') && v !== 'runtime/default' && !v.startsWith('localhost/'));
    return bad.length ? { reason: 'forbidden AppArmor profile', detail: bad.map(([k, v]) => `${k}=${q(v)}`).join(', ') } : undefined;
  } },
  { id: 'capabilities_baseline', level: 'baseline', run(p) {
    const bad: string[] = [];
    const caps = new Set<string>();
    for (const c of p.containers) {
      const added = (sc(c).capabilities?.add ?? []).filter((x: string) => !BASELINE_CAPS.has(x));
      if (added.length) { bad.push(c.name); added.forEach((x: string) => caps.add(x)); }
    }
    return bad.length ? { reason: 'non-default capabilities', detail: `${named('container', bad)} must not include ${[...caps].map(q).join(', ')} in securityContext.capabilities.add` } : undefined;
  } },
  { id: 'hostNamespaces', level: 'baseline', run(p) {
    const on = ['hostNetwork', 'hostPID', 'hostIPC'].filter((k) => p.spec[k] === true);
    return on.length ? { reason: 'host namespaces', detail: on.map((k) => `${k}=true`).join(', ') } : undefined;
  } },
  { id: 'hostPathVolumes', level: 'baseline', run(p) {
    const bad = list(p.spec.volumes).filter((v) => v.hostPath).map((v) => v.name);
    return bad.length ? { reason: 'hostPath volumes', detail: named('volume', bad) } : undefined;
  } },
  { id: 'hostPorts', level: 'baseline', run(p) {
    const bad: string[] = [];
    const ports: number[] = [];
    for (const c of p.containers) {
      const hp = list(c.ports).map((x) => x.hostPort).filter((x) => typeof x === 'number' && x !== 0);
      if (hp.length) { bad.push(c.name); ports.push(...hp); }
    }
    return bad.length ? { reason: 'hostPort', detail: `${named('container', bad)} ${plural(bad.length, 'uses', 'use')} ${plural(ports.length, 'hostPort', 'hostPorts')} ${ports.join(', ')}` } : undefined;
  } },
  { id: 'privileged', level: 'baseline', run(p) {
    const bad = p.containers.filter((c) => sc(c).privileged === true).map((c) => c.name);
    return bad.length ? { reason: 'privileged', detail: `${named('container', bad)} must not set securityContext.privileged=true` } : undefined;
  } },
  { id: 'procMount', level: 'baseline', run(p) {
    const bad = p.containers.filter((c) => sc(c).procMount !== undefined && sc(c).procMount !== 'Default');
    return bad.length ? { reason: 'procMount', detail: `${named('container', bad.map((c) => c.name))} ${plural(bad.length, 'sets', 'set')} procMount to ${[...new Set(bad.map((c) => q(sc(c).procMount)))].join(', ')}` } : undefined;
  } },
  { id: 'seccompProfile_baseline', level: 'baseline', run(p) {
    const out: string[] = [];
    if (psc(p).seccompProfile?.type === 'Unconfined') out.push('pod must not set securityContext.seccompProfile.type to "Unconfined"');
    const bad = p.containers.filter((c) => sc(c).seccompProfile?.type === 'Unconfined').map((c) => c.name);
    if (bad.length) out.push(`${named('container', bad)} must not set securityContext.seccompProfile.type to "Unconfined"`);
    return out.length ? { reason: 'seccompProfile', detail: out.join('; ') } : undefined;
  } },
  { id: 'seLinuxOptions', level: 'baseline', run(p) {
    const ok = (o: J | undefined) => !o || ((!o.type || ['container_t', 'container_init_t', 'container_kvm_t'].includes(o.type)) && !o.user && !o.role);
    const bad = p.containers.filter((c) => !ok(sc(c).seLinuxOptions)).map((c) => c.name);
    if (!ok(psc(p).seLinuxOptions) || bad.length) return { reason: 'seLinuxOptions', detail: [!ok(psc(p).seLinuxOptions) ? 'pod' : '', bad.length ? named('container', bad) : ''].filter(Boolean).join(' and ') + ' set forbidden securityContext.seLinuxOptions' };
    return undefined;
  } },
  { id: 'sysctls', level: 'baseline', run(p) {
    const bad = list(psc(p).sysctls).map((s) => s.name).filter((n) => !SAFE_SYSCTLS.has(n));
    return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
  } },
  { id: 'windowsHostProcess', level: 'baseline', run(p) {
    const bad = p.containers.filter((c) => sc(c).windowsOptions?.hostProcess === true).map((c) => c.name);
    if (psc(p).windowsOptions?.hostProcess === true || bad.length) return { reason: 'hostProcess', detail: [psc(p).windowsOptions?.hostProcess === true ? 'pod' : '', bad.length ? named('container', bad) : ''].filter(Boolean).join(' and ') + ' must not set securityContext.windowsOptions.hostProcess=true' };
    return undefined;
  } },
  // ---------------------------------------------------------------- restricted
  { id: 'allowPrivilegeEscalation', level: 'restricted', run(p) {
    const bad = [...list(p.spec.initContainers), ...list(p.spec.containers), ...list(p.spec.ephemeralContainers)].filter((c) => sc(c).allowPrivilegeEscalation !== false).map((c) => c.name);
    return bad.length ? { reason: 'allowPrivilegeEscalation != false', detail: `${named('container', bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
  } },
  { id: 'capabilities_restricted', level: 'restricted', overrides: ['capabilities_baseline'], run(p) {
    const noDrop = p.containers.filter((c) => !(sc(c).capabilities?.drop ?? []).includes('ALL')).map((c) => c.name);
    const adders: string[] = [];
    const caps = new Set<string>();
    for (const c of p.containers) {
      const added = (sc(c).capabilities?.add ?? []).filter((x: string) => x !== 'NET_BIND_SERVICE');
      if (added.length) { adders.push(c.name); added.forEach((x: string) => caps.add(x)); }
    }
    const out: string[] = [];
    if (noDrop.length) out.push(`${named('container', noDrop)} must set securityContext.capabilities.drop=["ALL"]`);
    if (adders.length) out.push(`${named('container', adders)} must not include ${[...caps].map(q).join(', ')} in securityContext.capabilities.add`);
    return out.length ? { reason: 'unrestricted capabilities', detail: out.join('; ') } : undefined;
  } },
  { id: 'restrictedVolumes', level: 'restricted', overrides: ['hostPathVolumes'], run(p) {
    const bad = list(p.spec.volumes).map((v) => [v.name, Object.keys(v).find((k) => k !== 'name')] as [string, string | undefined]).filter(([, t]) => t && !RESTRICTED_VOLUME_OK.has(t));
    if (!bad.length) return undefined;
    const types = [...new Set(bad.map(([, t]) => t!))];
    return { reason: 'restricted volume types', detail: `${named('volume', bad.map(([n]) => n))} ${plural(bad.length, 'uses', 'use')} ${plural(types.length, 'restricted volume type', 'restricted volume types')} ${types.map(q).join(', ')}` };
  } },
  { id: 'runAsNonRoot', level: 'restricted', run(p) {
    const podSet = psc(p).runAsNonRoot;
    if (podSet === false) return { reason: 'runAsNonRoot != true', detail: 'pod must not set securityContext.runAsNonRoot=false' };
    const explicitFalse = p.containers.filter((c) => sc(c).runAsNonRoot === false).map((c) => c.name);
    const unset = podSet === true ? [] : p.containers.filter((c) => sc(c).runAsNonRoot === undefined).map((c) => c.name);
    const out: string[] = [];
    if (explicitFalse.length) out.push(`${named('container', explicitFalse)} must not set securityContext.runAsNonRoot=false`);
    if (unset.length) out.push(`pod or ${named('container', unset)} must set securityContext.runAsNonRoot=true`);
    return out.length ? { reason: 'runAsNonRoot != true', detail: out.join('; ') } : undefined;
  } },
  { id: 'runAsUser', level: 'restricted', run(p) {
    const out: string[] = [];
    if (psc(p).runAsUser === 0) out.push('pod must not set runAsUser=0');
    const bad = p.containers.filter((c) => sc(c).runAsUser === 0).map((c) => c.name);
    if (bad.length) out.push(`${named('container', bad)} must not set runAsUser=0`);
    return out.length ? { reason: 'runAsUser=0', detail: out.join('; ') } : undefined;
  } },
  { id: 'seccompProfile_restricted', level: 'restricted', overrides: ['seccompProfile_baseline'], run(p) {
    const ok = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
    const podType = psc(p).seccompProfile?.type;
    const out: string[] = [];
    if (podType !== undefined && !ok(podType)) out.push(`pod must not set securityContext.seccompProfile.type to ${q(podType)}`);
    const explicit = p.containers.filter((c) => sc(c).seccompProfile?.type !== undefined && !ok(sc(c).seccompProfile.type));
    if (explicit.length) out.push(`${named('container', explicit.map((c) => c.name))} must not set securityContext.seccompProfile.type to ${[...new Set(explicit.map((c) => q(sc(c).seccompProfile.type)))].join(', ')}`);
    const unset = ok(podType) ? [] : p.containers.filter((c) => sc(c).seccompProfile?.type === undefined).map((c) => c.name);
    if (unset.length) out.push(`pod or ${named('container', unset)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`);
    return out.length ? { reason: 'seccompProfile', detail: out.join('; ') } : undefined;
  } },
];

/** The checks of a level, in the order the reference reports them. */
function checksFor(level: Level): Check[] {
  if (level === 'privileged') return [];
  const wanted = CHECKS.filter((c) => c.level === 'baseline' || level === 'restricted');
  const overridden = new Set(wanted.flatMap((c) => c.overrides ?? []));
  return wanted.filter((c) => !overridden.has(c.id));
}

/** Violations of a pod against a level; empty when it complies. */
export function evaluate(level: Level, pod: PodView): Violation[] {
  const out: Violation[] = [];
  for (const c of checksFor(level)) {
    const v = c.run(pod);
    if (v) out.push(v);
  }
  return out;
}

/** "privileged (container "c" must not set ...), allowPrivilegeEscalation != false (...)". */
export function describe(vs: Violation[]): string {
  return vs.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
}
