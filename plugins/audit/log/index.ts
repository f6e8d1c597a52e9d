// The log audit backend: audit events as JSON lines in a file (or on standard output), with the
// reference server's policy file format and its size-based rotation (--audit-log-maxsize,
// --audit-log-maxbackup, --audit-log-maxage).
//
// Options:
//   path        file to append to; "-" writes to standard output (required)
//   policyFile  audit policy (kind Policy, apiVersion audit.<domain>/v1), YAML or JSON
//   policy      the same policy inline (instead of policyFile)
//   maxSizeMB   rotate before the file would grow past this many megabytes (0 or unset: never)
//   maxBackups  rotated files to keep (0 or unset: all)
//   maxAgeDays  delete rotated files older than this, by the time in their name (0 or unset: keep)
// Without a policy nothing is recorded, as in the reference.
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import {
  CONTRACT_VERSION, type AuditBackend, type AuditEvent, type AuditLevel, type AuditPolicyDecision, type AuditRequestAttributes, type AuditStage,
  type Logger, type PluginHost, type PluginModule,
} from '../../../kernel/contracts/index.js';

// ---------------------------------------------------------------- policy

const LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: readonly AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: Set<string> | undefined;
}

interface CompiledRule {
  level: AuditLevel;
  users?: Set<string>;
  userGroups?: Set<string>;
  verbs?: Set<string>;
  resources?: GroupResources[];
  namespaces?: Set<string>;
  nonResourceURLs?: string[];
  decision: AuditPolicyDecision;
}

export interface CompiledPolicy {
  rules: CompiledRule[];
}

const NONE: AuditPolicyDecision = { level: 'None' };

function stringList(v: unknown, where: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new Error(`${where} must be a list of strings`);
  return v as string[];
}

function stageList(v: unknown, where: string): AuditStage[] | undefined {
  const l = stringList(v, where);
  for (const s of l ?? []) if (!STAGES.includes(s as AuditStage)) throw new Error(`${where}: unknown stage "${s}" (known: ${STAGES.join(', ')})`);
  return l as AuditStage[] | undefined;
}

const POLICY_KEYS = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
const RULE_KEYS = new Set(['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']);

/**
 * Checks and compiles a Policy document. Rules are tried in order; the first that matches gives the
 * level. A rule's omitStages add to the policy's; its omitManagedFields overrides the policy's.
 */
export function compilePolicy(doc: unknown, domain: string, source = 'audit policy'): CompiledPolicy {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${source}: not a Policy object`);
  const d = doc as Record<string, unknown>;
  for (const k of Object.keys(d)) if (!POLICY_KEYS.has(k)) throw new Error(`${source}: unknown key "${k}"`);
  const versions = [`audit.${domain}/v1`, `audit.${domain}/v1beta1`];
  if (d.kind !== 'Policy' || !versions.includes(String(d.apiVersion))) throw new Error(`${source}: expected kind Policy in ${versions.join(' or ')}`);
  const policyOmit = stageList(d.omitStages, `${source}: omitStages`) ?? [];
  const policyOmitMF = d.omitManagedFields === true;
  if (!Array.isArray(d.rules)) throw new Error(`${source}: rules must be a list`);
  const rules = d.rules.map((raw: unknown, i: number): CompiledRule => {
    const at = `${source}: rules[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${at} must be an object`);
    const r = raw as Record<string, unknown>;
    for (const k of Object.keys(r)) if (!RULE_KEYS.has(k)) throw new Error(`${at}: unknown key "${k}"`);
    if (!LEVELS.includes(r.level as AuditLevel)) throw new Error(`${at}.level must be one of ${LEVELS.join(', ')}`);
    const set = (v: unknown, name: string) => {
      const l = stringList(v, `${at}.${name}`);
      return l && l.length ? new Set(l) : undefined;
    };
    const rule: CompiledRule = { level: r.level as AuditLevel, decision: NONE };
    rule.users = set(r.users, 'users');
    rule.userGroups = set(r.userGroups, 'userGroups');
    rule.verbs = set(r.verbs, 'verbs');
    rule.namespaces = set(r.namespaces, 'namespaces');
    const urls = stringList(r.nonResourceURLs, `${at}.nonResourceURLs`);
    if (urls?.length) {
      for (const u of urls) {
        if (u !== '*' && !u.startsWith('/')) throw new Error(`${at}.nonResourceURLs: "${u}" must start with "/" (or be "*")`);
        if (u.indexOf('*') >= 0 && u.indexOf('*') !== u.length - 1) throw new Error(`${at}.nonResourceURLs: "${u}": "*" is allowed only at the end`);
      }
      rule.nonResourceURLs = urls;
    }
    if (r.resources !== undefined && r.resources !== null) {
      if (!Array.isArray(r.resources)) throw new Error(`${at}.resources must be a list`);
      rule.resources = r.resources.map((g: unknown, j: number) => {
        const gw = `${at}.resources[${j}]`;
        if (!g || typeof g !== 'object' || Array.isArray(g)) throw new Error(`${gw} must be an object`);
        const gr = g as Record<string, unknown>;
        for (const k of Object.keys(gr)) if (!['group', 'resources', 'resourceNames'].includes(k)) throw new Error(`${gw}: unknown key "${k}"`);
        if (gr.group !== undefined && typeof gr.group !== 'string') throw new Error(`${gw}.group must be a string`);
        const resources = stringList(gr.resources, `${gw}.resources`) ?? [];
        const names = stringList(gr.resourceNames, `${gw}.resourceNames`);
        for (const res of resources) {
          if (res === '*/*') throw new Error(`${gw}.resources: "*/*" is not allowed (use "*")`);
          if (names?.length && res.includes('*')) throw new Error(`${gw}: resourceNames cannot be combined with a wildcard resource ("${res}")`);
        }
        return { group: (gr.group as string | undefined) ?? '', resources, resourceNames: names?.length ? new Set(names) : undefined };
      });
      if (!rule.resources.length) rule.resources = undefined;
    }
    if (rule.nonResourceURLs && (rule.resources || rule.namespaces)) throw new Error(`${at}: nonResourceURLs cannot be combined with resources or namespaces`);
    const omit = [...new Set([...policyOmit, ...(stageList(r.omitStages, `${at}.omitStages`) ?? [])])];
    const omitMF = typeof r.omitManagedFields === 'boolean' ? r.omitManagedFields : policyOmitMF;
    rule.decision = { level: rule.level };
    if (omit.length) rule.decision.omitStages = omit;
    if (omitMF) rule.decision.omitManagedFields = true;
    return rule;
  });
  return { rules };
}

function pathMatches(p: string, spec: string): boolean {
  if (spec === '*' || spec === p) return true;
  return spec.endsWith('*') && p.startsWith(spec.slice(0, -1));
}

function matchesResource(r: CompiledRule, a: AuditRequestAttributes): boolean {
  if (a.nonResource) return false;
  if (r.namespaces && !r.namespaces.has(a.namespace ?? '')) return false; // cluster-scoped requests have namespace ""
  if (!r.resources) return true;
  const resource = a.resource ?? '';
  const sub = a.subresource ?? '';
  const combined = sub ? `${resource}/${sub}` : resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (!gr.resources.length) return true;
    if (gr.resourceNames && !gr.resourceNames.has(a.name ?? '')) continue;
    for (const res of gr.resources) {
      if (res === '*' || res === combined) return true;
      if (sub && res.startsWith('*/') && res.slice(2) === sub) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === resource) return true;
    }
  }
  return false;
}

function ruleMatches(r: CompiledRule, a: AuditRequestAttributes): boolean {
  if (r.users && !r.users.has(a.user.username)) return false;
  if (r.userGroups && !a.user.groups?.some((g) => r.userGroups!.has(g))) return false;
  if (r.verbs && !r.verbs.has(a.verb)) return false;
  if (r.namespaces || r.resources) return matchesResource(r, a);
  if (r.nonResourceURLs) return a.nonResource && r.nonResourceURLs.some((u) => pathMatches(a.path, u));
  return true;
}

/** The first matching rule's decision; None when no rule matches. */
export function evaluatePolicy(p: CompiledPolicy, a: AuditRequestAttributes): AuditPolicyDecision {
  for (const r of p.rules) if (ruleMatches(r, a)) return r.decision;
  return NONE;
}

// ---------------------------------------------------------------- rotating writer

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Backup time stamp as the reference's rotation names files: 2006-01-02T15-04-05.000 (UTC). */
function backupStamp(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}
const STAMP_RE = /^(\d{4})-(\d\d)-(\d\d)T(\d\d)-(\d\d)-(\d\d)\.(\d{3})$/;

export interface RotationOptions {
  maxBytes: number;
  maxBackups: number;
  maxAgeDays: number;
}

/**
 * Appends lines to a file. Lines written during one turn of the event loop go out in one write on the
 * next turn. Before a write would take the file past maxBytes it is renamed to
 * <name>-<time><ext> and a new one started; old backups are pruned by count and age.
 */
export class RotatingFile {
  private fd = -1;
  private size = 0;
  private pending: string[] = [];
  private scheduled = false;
  private readonly dir: string;
  private readonly prefix: string;
  private readonly ext: string;

  constructor(private readonly file: string, private readonly opts: RotationOptions, private readonly log?: Logger) {
    this.dir = path.dirname(file);
    this.ext = path.extname(file);
    this.prefix = path.basename(file, this.ext) + '-';
    mkdirSync(this.dir, { recursive: true });
    this.open();
  }

  private open(): void {
    this.fd = openSync(this.file, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  write(line: string): void {
    this.pending.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (!this.pending.length || this.fd < 0) return;
    const lines = this.pending;
    this.pending = [];
    const max = this.opts.maxBytes;
    let chunk: string[] = [];
    let chunkBytes = 0;
    for (const l of lines) {
      const n = Buffer.byteLength(l);
      if (max > 0 && this.size + chunkBytes + n > max && this.size + chunkBytes > 0) {
        this.writeOut(chunk.join(''));
        chunk = [];
        chunkBytes = 0;
        this.rotate();
      }
      chunk.push(l);
      chunkBytes += n;
    }
    if (chunk.length) this.writeOut(chunk.join(''));
  }

  private writeOut(data: string): void {
    if (!data) return;
    const buf = Buffer.from(data);
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
      this.size += buf.length;
    } catch (e) {
      this.log?.error('audit log write failed', { file: this.file, error: String(e) });
    }
  }

  private rotate(): void {
    try {
      closeSync(this.fd);
      let t = Date.now();
      let backup: string;
      // two rotations in one millisecond must not overwrite each other
      while (existsSync((backup = path.join(this.dir, `${this.prefix}${backupStamp(new Date(t))}${this.ext}`)))) t++;
      renameSync(this.file, backup);
    } catch (e) {
      this.log?.error('audit log rotation failed', { file: this.file, error: String(e) });
    }
    this.open();
    this.prune();
  }

  /** Rotated files of this log, newest first, with the time in their names. */
  backups(): { file: string; time: number }[] {
    const out: { file: string; time: number }[] = [];
    for (const f of readdirSync(this.dir)) {
      if (!f.startsWith(this.prefix) || !f.endsWith(this.ext)) continue;
      const m = STAMP_RE.exec(f.slice(this.prefix.length, f.length - this.ext.length));
      if (!m) continue;
      out.push({ file: path.join(this.dir, f), time: Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], +m[7]) });
    }
    return out.sort((a, b) => b.time - a.time);
  }

  private prune(): void {
    const { maxBackups, maxAgeDays } = this.opts;
    if (!maxBackups && !maxAgeDays) return;
    const cutoff = maxAgeDays ? Date.now() - maxAgeDays * 86_400_000 : -Infinity;
    try {
      this.backups().forEach((b, i) => {
        if ((maxBackups && i >= maxBackups) || b.time < cutoff) unlinkSync(b.file);
      });
    } catch (e) {
      this.log?.warn('audit log backup pruning failed', { file: this.file, error: String(e) });
    }
  }

  close(): void {
    this.flush();
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

// ---------------------------------------------------------------- the plugin

function nonNegative(v: unknown, name: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`option ${name} must be a number >= 0`);
  return v;
}

function loadPolicy(options: Record<string, unknown>, domain: string): CompiledPolicy | undefined {
  if (options.policy !== undefined && options.policyFile !== undefined) throw new Error('give either option policy or option policyFile, not both');
  if (options.policy !== undefined) return compilePolicy(options.policy, domain, 'audit policy (option policy)');
  if (options.policyFile === undefined) return undefined;
  if (typeof options.policyFile !== 'string' || !options.policyFile) throw new Error('option policyFile must be a file name');
  const file = options.policyFile;
  let doc: unknown;
  try {
    doc = YAML.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`audit policy ${file}: ${(e as Error).message}`);
  }
  return compilePolicy(doc, domain, `audit policy ${file}`);
}

const plugin: PluginModule<'audit'> = {
  kind: 'audit',
  contract: CONTRACT_VERSION,
  name: 'log',
  create(options, host: PluginHost): AuditBackend {
    const file = options.path;
    if (typeof file !== 'string' || !file) throw new Error('option path is required (a file, or "-" for standard output)');
    const policy = loadPolicy(options, host.brand.domain);
    if (!policy) host.log.warn('no audit policy given: the log audit backend records no events', { path: file });
    const rotation: RotationOptions = {
      maxBytes: Math.floor(nonNegative(options.maxSizeMB, 'maxSizeMB') * 1024 * 1024),
      maxBackups: Math.floor(nonNegative(options.maxBackups, 'maxBackups')),
      maxAgeDays: nonNegative(options.maxAgeDays, 'maxAgeDays'),
    };
    let out: { write(line: string): void; close(): void };
    if (file === '-') {
      out = { write: (line) => { process.stdout.write(line); }, close: () => {} };
    } else {
      out = new RotatingFile(path.resolve(file), rotation, host.log);
    }
    return {
      level: (attrs) => (policy ? evaluatePolicy(policy, attrs) : NONE),
      record: (ev: AuditEvent) => out.write(JSON.stringify(ev) + '\n'),
      close: async () => out.close(),
    };
  },
};

export default plugin;
