// Webhook (--authorization-mode=Webhook, --authorization-webhook-config-file): each decision is asked
// of a remote service as a SubjectAccessReview (authorization.<domain>/v1beta1 by default, or v1)
// POSTed over HTTPS to the server of a kubeconfig-format file, with its CA and client credentials.
// status.allowed → allow, status.denied → deny, neither → no opinion. Answers are cached by the
// request's attributes (allowed ones for --authorization-webhook-cache-authorized-ttl, default 5m;
// others for --authorization-webhook-cache-unauthorized-ttl, default 30s). Failures are logged and
// have no opinion (and are not cached).
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import YAML from 'yaml';
import { CONTRACT_VERSION, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer, type PluginModule } from '../../../kernel/contracts.js';
import { registerRulesResolver } from '../rbac/resolvers.js';

const TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 1 << 20;
const MAX_CACHE_ENTRIES = 10_000;
export const DEFAULT_AUTHORIZED_TTL_SECONDS = 300;
export const DEFAULT_UNAUTHORIZED_TTL_SECONDS = 30;

export interface WebhookTarget {
  url: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  servername?: string;
  insecure: boolean;
}

type Entry = Record<string, unknown>;

/** The current context's cluster and user of a kubeconfig-format file (or the first of each). */
export function readWebhookConfig(file: string): WebhookTarget {
  const fail = (msg: string) => new Error(`authorization webhook config ${file}: ${msg}`);
  let doc: Entry;
  try {
    doc = (YAML.parse(readFileSync(file, 'utf8')) ?? {}) as Entry;
  } catch (e) {
    throw fail((e as Error).message);
  }
  const named = (k: string) => (Array.isArray(doc[k]) ? (doc[k] as Entry[]) : []);
  const ctx = named('contexts').find((c) => c.name === doc['current-context'])?.context as Entry | undefined;
  const pick = (k: string, inner: string, want: unknown) => ((ctx ? named(k).find((c) => c.name === want) : named(k)[0])?.[inner] ?? undefined) as Entry | undefined;
  const cluster = pick('clusters', 'cluster', ctx?.cluster);
  const user = pick('users', 'user', ctx?.user) ?? {};
  if (!cluster || typeof cluster.server !== 'string') throw fail('no cluster with a server');
  let url: URL;
  try { url = new URL(cluster.server); } catch { throw fail(`server "${cluster.server}" is not a URL`); }
  if (url.protocol !== 'https:') throw fail(`server must be an https URL, got "${cluster.server}"`);
  const dir = path.dirname(file);
  const material = (e: Entry, name: string): Buffer | undefined => {
    const data = e[`${name}-data`];
    if (typeof data === 'string' && data) return Buffer.from(data, 'base64');
    const f = e[name];
    if (typeof f !== 'string' || !f) return undefined;
    try { return readFileSync(path.resolve(dir, f)); } catch (err) { throw fail(`${name}: ${(err as Error).message}`); }
  };
  const t: WebhookTarget = {
    url,
    ca: material(cluster, 'certificate-authority'),
    cert: material(user, 'client-certificate'),
    key: material(user, 'client-key'),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    servername: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
  };
  if (!!t.cert !== !!t.key) throw fail('client-certificate and client-key go together');
  if (typeof user.token === 'string' && user.token) t.token = user.token;
  return t;
}

/** The SubjectAccessReview sent for a request (v1beta1 names the groups field "group"). */
export function reviewFor(a: AuthorizationAttributes, group: string, version: string): Entry {
  const spec: Entry = {};
  if (a.isResourceRequest) {
    const ra: Entry = {};
    const put = (k: string, v: string) => { if (v) ra[k] = v; };
    put('namespace', a.namespace);
    put('verb', a.verb);
    put('group', a.apiGroup);
    put('version', a.apiVersion);
    put('resource', a.resource);
    put('subresource', a.subresource);
    put('name', a.name);
    spec.resourceAttributes = ra;
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  spec.user = a.user.username;
  if (a.user.groups?.length) spec[version === 'v1beta1' ? 'group' : 'groups'] = [...a.user.groups];
  if (a.user.uid) spec.uid = a.user.uid;
  if (a.user.extra && Object.keys(a.user.extra).length) spec.extra = a.user.extra;
  return { apiVersion: `${group}/${version}`, kind: 'SubjectAccessReview', spec };
}

function post(t: WebhookTarget, agent: https.Agent, body: string): Promise<Entry> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    if (t.token) headers.authorization = `Bearer ${t.token}`;
    const req = https.request(t.url, {
      method: 'POST', headers, agent, timeout: TIMEOUT_MS,
      ca: t.ca, cert: t.cert, key: t.key, servername: t.servername, rejectUnauthorized: !t.insecure,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_RESPONSE_BYTES) req.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299) return reject(new Error(`HTTP ${code}${text ? `: ${text.slice(0, 200)}` : ''}`));
        try {
          resolve(JSON.parse(text) as Entry);
        } catch {
          reject(new Error('the answer is not JSON'));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000}s`)));
    req.on('error', reject);
    req.end(body);
  });
}

const plugin: PluginModule<'authorizer'> = {
  kind: 'authorizer',
  contract: CONTRACT_VERSION,
  name: 'webhook',
  create(options, host): Authorizer {
    const file = options.configFile;
    if (typeof file !== 'string' || !file) throw new Error('authorization mode Webhook needs a configuration file (--authorization-webhook-config-file)');
    const target = readWebhookConfig(file);
    const version = options.version === undefined ? 'v1beta1' : String(options.version);
    if (version !== 'v1' && version !== 'v1beta1') throw new Error(`authorization webhook version must be v1 or v1beta1, got "${version}"`);
    const ttl = (v: unknown, d: number) => (typeof v === 'number' && v >= 0 ? v : d) * 1000;
    const allowTTL = ttl(options.authorizedTTLSeconds, DEFAULT_AUTHORIZED_TTL_SECONDS);
    const denyTTL = ttl(options.unauthorizedTTLSeconds, DEFAULT_UNAUTHORIZED_TTL_SECONDS);
    const group = `authorization.${host.brand.domain}`;
    const agent = new https.Agent({ keepAlive: true, maxSockets: 32 });
    const cache = new Map<string, { until: number; d: AuthorizationDecision }>();
    const inflight = new Map<string, Promise<AuthorizationDecision>>();
    const unregister = registerRulesResolver(host.dataDir, 'webhook', () => ({
      resourceRules: [], nonResourceRules: [], incomplete: true, error: 'webhook authorizer does not support user rule resolution',
    }));

    const ask = async (key: string, body: string): Promise<AuthorizationDecision> => {
      let review: Entry;
      try {
        review = await post(target, agent, body);
      } catch (e) {
        host.log.warn('authorization webhook failed', { url: target.url.href, error: (e as Error).message });
        return { decision: 'no-opinion', reason: `webhook authorizer error: ${(e as Error).message}` };
      }
      const st = (review.status ?? {}) as Entry;
      const reason = typeof st.reason === 'string' && st.reason ? st.reason : undefined;
      const d: AuthorizationDecision = st.allowed === true ? { decision: 'allow' } : st.denied === true ? { decision: 'deny' } : { decision: 'no-opinion' };
      if (reason) d.reason = reason;
      const life = d.decision === 'allow' ? allowTTL : denyTTL;
      if (life > 0) {
        if (cache.size >= MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(key, { until: Date.now() + life, d });
      }
      return d;
    };

    return {
      authorize(a) {
        const body = JSON.stringify(reviewFor(a, group, version));
        const hit = cache.get(body);
        if (hit) {
          if (hit.until > Date.now()) return hit.d;
          cache.delete(body);
        }
        let p = inflight.get(body);
        if (!p) {
          p = ask(body, body).finally(() => inflight.delete(body));
          inflight.set(body, p);
        }
        return p;
      },
      async close() {
        unregister();
        agent.destroy();
      },
    };
  },
};

export default plugin;
