// ImagePolicyWebhook: asks a backend whether a pod's images may run. Each create or update of a pod
// (or of its ephemeral containers) sends an ImageReview (imagepolicy.<domain>/v1alpha1) with every
// container's image, the pod's `*.image-policy.<domain>/*` annotations and its namespace; the answer's
// status.allowed decides. Answers are cached (allowTTL, denyTTL); transient failures are retried with
// a growing backoff from retryBackoff; when the backend cannot answer, defaultAllow decides.
//
// Options, from the admission configuration file: `imagePolicy: { kubeConfigFile, allowTTL (s),
// denyTTL (s), retryBackoff (ms), defaultAllow }`. The kubeconfig's cluster server must be https.
import https from 'node:https';
import path from 'node:path';
import { CONTRACT_VERSION, type AdmissionAttributes, type PluginHost, type PluginModule } from '../../../kernel/contracts/index.js';
import { loadKubeconfig, currentTarget, type ClusterEntry, type Credentials } from '../webhook-common/kubeconfig.js';

type J = Record<string, any>;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

const DEFAULT_ALLOW_TTL = 300; // seconds
const DEFAULT_DENY_TTL = 30; // seconds
const DEFAULT_RETRY_BACKOFF = 500; // milliseconds
const MAX_TTL = 30 * 60;
const MAX_BACKOFF = 5 * 60 * 1000;
const CALL_TIMEOUT_MS = 30_000;
const RETRY_STEPS = 5;
const CACHE_SIZE = 1024;
const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

export interface ImagePolicyOptions {
  kubeConfigFile: string;
  /** Seconds an allow is cached (0: default 300, -1: not cached). */
  allowTTL: number;
  /** Seconds a denial is cached (0: default 30, -1: not cached). */
  denyTTL: number;
  /** First retry delay in milliseconds (0: default 500). */
  retryBackoff: number;
  defaultAllow: boolean;
}

function num(v: unknown, what: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`imagePolicy.${what} must be a number`);
  return v;
}

/** Reads and checks `imagePolicy` (the reference's ranges: TTLs 1s–30m or -1 to disable, backoff 1ms–5m). */
export function readOptions(options: Record<string, unknown>): ImagePolicyOptions {
  const ip = options.imagePolicy;
  if (!isObj(ip)) throw new Error('ImagePolicyWebhook needs an imagePolicy section in its admission configuration');
  if (typeof ip.kubeConfigFile !== 'string' || !ip.kubeConfigFile) throw new Error('imagePolicy.kubeConfigFile is required');
  const ttl = (v: number, def: number, what: string) => {
    if (v === 0) return def;
    if (v === -1) return -1;
    if (v < 1 || v > MAX_TTL) throw new Error(`imagePolicy.${what}: valid value is between 1s and 30m0s, got ${v}s`);
    return v;
  };
  const backoff = num(ip.retryBackoff, 'retryBackoff');
  if (backoff !== 0 && (backoff < 1 || backoff > MAX_BACKOFF)) throw new Error(`imagePolicy.retryBackoff: valid value is between 1ms and 5m0s, got ${backoff}ms`);
  if (ip.defaultAllow !== undefined && typeof ip.defaultAllow !== 'boolean') throw new Error('imagePolicy.defaultAllow must be a boolean');
  return {
    kubeConfigFile: ip.kubeConfigFile,
    allowTTL: ttl(num(ip.allowTTL, 'allowTTL'), DEFAULT_ALLOW_TTL, 'allowTTL'),
    denyTTL: ttl(num(ip.denyTTL, 'denyTTL'), DEFAULT_DENY_TTL, 'denyTTL'),
    retryBackoff: backoff || DEFAULT_RETRY_BACKOFF,
    defaultAllow: ip.defaultAllow === true,
  };
}

interface Verdict { allowed: boolean; reason: string; auditAnnotations: Record<string, string> }

/** A failed exchange; `retry` marks the transient ones (reset connections, 429, 500, 503, 504). */
class BackendError extends Error {
  constructor(message: string, readonly retry: boolean) { super(message); }
}

class Backend {
  private agent = new https.Agent({ keepAlive: true });
  constructor(private cluster: ClusterEntry, private user: Credentials) {}

  post(body: string): Promise<unknown> {
    const u = new URL(this.cluster.server);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    if (this.user.token) headers.authorization = `Bearer ${this.user.token}`;
    else if (this.user.username !== undefined) headers.authorization = `Basic ${Buffer.from(`${this.user.username}:${this.user.password ?? ''}`).toString('base64')}`;
    const show = `Post "${this.cluster.server}"`;
    return new Promise((resolve, reject) => {
      const req = https.request({
        host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: u.port ? Number(u.port) : 443, path: `${u.pathname}${u.search}`, method: 'POST', headers, agent: this.agent,
        ...(this.cluster.ca ? { ca: this.cluster.ca } : {}),
        ...(this.user.cert && this.user.key ? { cert: this.user.cert, key: this.user.key } : {}),
        ...(this.cluster.tlsServerName ? { servername: this.cluster.tlsServerName } : {}),
        rejectUnauthorized: !this.cluster.insecureSkipTLSVerify,
        timeout: CALL_TIMEOUT_MS,
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new Error(`response body larger than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (code < 200 || code > 299) {
            reject(new BackendError(`${show}: the server responded with the status code ${code}`, [429, 500, 503, 504].includes(code)));
            return;
          }
          try { resolve(JSON.parse(text)); } catch (e) { reject(new BackendError(`${show}: invalid JSON in the response: ${(e as Error).message}`, false)); }
        });
      });
      req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
      req.on('error', (e: NodeJS.ErrnoException) => {
        const msg = e.code === 'ECONNREFUSED' ? `dial tcp ${u.host}: connect: connection refused` : e.message;
        reject(new BackendError(`${show}: ${msg}`, e.code === 'ECONNRESET'));
      });
      req.end(body);
    });
  }

  close(): void { this.agent.destroy(); }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createImagePolicy(options: Record<string, unknown>, host: PluginHost) {
  const opts = readOptions(options);
  const kc = loadKubeconfig(path.resolve(opts.kubeConfigFile));
  const { cluster, user } = currentTarget(kc);
  if (!/^https:\/\//i.test(cluster.server)) throw new Error(`imagePolicy backend ${cluster.server}: TLS is required (an https server)`);
  const backend = new Backend(cluster, user);
  const domain = host.brand.domain;
  const annotationMark = `.image-policy.${domain}/`;
  const auditPrefix = `imagepolicywebhook.image-policy.${domain}/`;
  const cache = new Map<string, { verdict: Verdict; expires: number }>();

  const review = (a: AdmissionAttributes): J => {
    const pod = a.object ?? {};
    const spec = isObj(pod.spec) ? pod.spec : {};
    const containers: { image: string }[] = [];
    for (const f of ['containers', 'initContainers', 'ephemeralContainers']) {
      for (const c of Array.isArray(spec[f]) ? spec[f] : []) if (isObj(c)) containers.push({ image: typeof c.image === 'string' ? c.image : '' });
    }
    const annotations: Record<string, string> = {};
    for (const [k, v] of Object.entries(pod.metadata?.annotations ?? {})) if (k.includes(annotationMark)) annotations[k] = v;
    const s: J = { containers };
    if (Object.keys(annotations).length) s.annotations = annotations;
    if (a.namespace) s.namespace = a.namespace;
    return { apiVersion: `imagepolicy.${domain}/v1alpha1`, kind: 'ImageReview', spec: s };
  };

  /** One exchange with retries of transient failures (backoff ×1.5 per step, 5 steps). */
  const ask = async (body: string): Promise<Verdict> => {
    let delay = opts.retryBackoff;
    for (let step = 1; ; step++) {
      try {
        const answer = await backend.post(body);
        const st = isObj(answer) && isObj(answer.status) ? answer.status : undefined;
        if (!st) throw new BackendError('the backend answered without a status', false);
        const annotations: Record<string, string> = {};
        if (isObj(st.auditAnnotations)) for (const [k, v] of Object.entries(st.auditAnnotations)) if (typeof v === 'string') annotations[k] = v;
        return { allowed: st.allowed === true, reason: typeof st.reason === 'string' ? st.reason : '', auditAnnotations: annotations };
      } catch (e) {
        if (!(e instanceof BackendError) || !e.retry || step >= RETRY_STEPS) throw e;
        await sleep(delay * (0.9 + Math.random() * 0.2));
        delay *= 1.5;
      }
    }
  };

  const forbidden = (a: AdmissionAttributes, why: string) =>
    host.errors.status(403, 'Forbidden', `${a.resource.resource}${a.name ? ` "${a.name}"` : ''} is forbidden: ${why}`);

  return {
    handles: (op: string, a: AdmissionAttributes) => (op === 'CREATE' || op === 'UPDATE') && a.resource.group === '' && a.resource.resource === 'pods'
      && (a.subresource === '' || a.subresource === 'ephemeralcontainers'),
    async validate(a: AdmissionAttributes): Promise<void> {
      const body = JSON.stringify(review(a));
      const now = Date.now();
      let verdict = cache.get(body);
      if (verdict && verdict.expires <= now) {
        cache.delete(body);
        verdict = undefined;
      }
      let v: Verdict;
      if (verdict) v = verdict.verdict;
      else {
        try {
          v = await ask(body);
        } catch (e) {
          if (opts.defaultAllow) {
            a.annotate?.(`${auditPrefix}failed-open`, 'true');
            host.log.warn('image policy webhook backend failed; allowed by defaultAllow', { error: (e as Error).message });
            return;
          }
          throw forbidden(a, (e as Error).message);
        }
        const ttl = v.allowed ? opts.allowTTL : opts.denyTTL;
        if (ttl > 0) {
          if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
          cache.set(body, { verdict: v, expires: now + ttl * 1000 });
        }
      }
      for (const [k, val] of Object.entries(v.auditAnnotations)) a.annotate?.(auditPrefix + k, val);
      if (!v.allowed) {
        throw forbidden(a, v.reason ? `image policy webhook backend denied one or more images: ${v.reason}` : 'one or more images rejected by webhook backend');
      }
    },
    close: async () => backend.close(),
  };
}

const plugin: PluginModule<'admission'> = {
  kind: 'admission',
  contract: CONTRACT_VERSION,
  name: 'ImagePolicyWebhook',
  create: (options, host) => createImagePolicy(options, host),
};
export default plugin;
