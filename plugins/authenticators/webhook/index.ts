// Token webhook (--authentication-token-webhook-config-file): bearer tokens are sent to a remote
// service as a TokenReview (authentication.<domain>/v1beta1 by default, or v1) over HTTPS, with the
// server, CA and client credentials taken from a kubeconfig-format file. Answers, positive and
// negative, are cached per token hash for --authentication-token-webhook-cache-ttl (default 2m);
// failures (timeouts, bad status, unreadable answers) reject the request and are not cached.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import YAML from 'yaml';
import { CONTRACT_VERSION, type Authenticator, type PluginHost, type PluginModule, type UserInfo } from '../../../kernel/contracts.js';
import { bearerToken } from '../token-file/index.js';

const TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 1 << 20;
const MAX_CACHE_ENTRIES = 10_000;
export const DEFAULT_CACHE_TTL_SECONDS = 120;

export interface WebhookClient {
  url: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  servername?: string;
  insecure: boolean;
}

type Named<T> = { name?: string } & T;

/** Reads the client configuration: current context (or the first entries), server URL, CA and credentials. */
export function readClientConfig(file: string): WebhookClient {
  const fail = (msg: string) => new Error(`token webhook config ${file}: ${msg}`);
  let doc: Record<string, unknown>;
  try {
    doc = (YAML.parse(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>;
  } catch (e) {
    throw fail((e as Error).message);
  }
  const dir = path.dirname(file);
  const clusters = (doc.clusters ?? []) as Named<{ cluster?: Record<string, unknown> }>[];
  const users = (doc.users ?? []) as Named<{ user?: Record<string, unknown> }>[];
  const contexts = (doc.contexts ?? []) as Named<{ context?: { cluster?: string; user?: string } }>[];
  if (!Array.isArray(clusters) || !Array.isArray(users) || !Array.isArray(contexts)) throw fail('clusters, users and contexts must be lists');
  const ctx = contexts.find((c) => c.name === doc['current-context'])?.context;
  const cluster = (ctx ? clusters.find((c) => c.name === ctx.cluster) : clusters[0])?.cluster;
  const user = (ctx ? users.find((u) => u.name === ctx.user) : users[0])?.user ?? {};
  if (!cluster) throw fail('no cluster entry');
  const server = cluster.server;
  if (typeof server !== 'string') throw fail('cluster has no server');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw fail(`server "${server}" is not a URL`);
  }
  if (url.protocol !== 'https:') throw fail(`server must be an https URL, got "${server}"`);
  // <name>-data holds base64 inline; <name> names a file relative to the config file
  const material = (entry: Record<string, unknown>, name: string): Buffer | undefined => {
    const data = entry[`${name}-data`];
    if (typeof data === 'string' && data) return Buffer.from(data, 'base64');
    const f = entry[name];
    if (typeof f !== 'string' || !f) return undefined;
    try {
      return readFileSync(path.resolve(dir, f));
    } catch (e) {
      throw fail(`${name}: ${(e as Error).message}`);
    }
  };
  const c: WebhookClient = {
    url,
    ca: material(cluster, 'certificate-authority'),
    cert: material(user, 'client-certificate'),
    key: material(user, 'client-key'),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    servername: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
  };
  if (!!c.cert !== !!c.key) throw fail('client-certificate and client-key go together');
  if (typeof user.token === 'string' && user.token) c.token = user.token;
  else if (typeof user.tokenFile === 'string' && user.tokenFile) c.token = readFileSync(path.resolve(dir, user.tokenFile), 'utf8').trim();
  return c;
}

/** What a review says, or why there is no answer. */
export type Review = { authenticated: true; user: UserInfo } | { authenticated: false; error: string };

/** One TokenReview round trip. Throws on transport failures, non-2xx statuses and unreadable answers. */
export function postReview(client: WebhookClient, agent: https.Agent, apiVersion: string, token: string): Promise<Review> {
  const body = JSON.stringify({ apiVersion, kind: 'TokenReview', spec: { token } });
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    if (client.token) headers.authorization = `Bearer ${client.token}`;
    const req = https.request(client.url, {
      method: 'POST', headers, agent, timeout: TIMEOUT_MS,
      ca: client.ca, cert: client.cert, key: client.key, servername: client.servername, rejectUnauthorized: !client.insecure,
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
        let review: { status?: { authenticated?: unknown; user?: Record<string, unknown>; error?: unknown } };
        try {
          review = JSON.parse(text);
        } catch {
          return reject(new Error('the answer is not JSON'));
        }
        const st = review?.status ?? {};
        if (st.authenticated !== true) return resolve({ authenticated: false, error: typeof st.error === 'string' && st.error ? st.error : 'token not authenticated by the webhook' });
        const u = st.user ?? {};
        if (typeof u.username !== 'string' || !u.username) return reject(new Error('authenticated answer without a user name'));
        const user: UserInfo = { username: u.username, groups: Array.isArray(u.groups) ? u.groups.filter((g): g is string => typeof g === 'string') : [] };
        if (typeof u.uid === 'string' && u.uid) user.uid = u.uid;
        if (u.extra && typeof u.extra === 'object') {
          const extra: Record<string, string[]> = {};
          for (const [k, v] of Object.entries(u.extra as Record<string, unknown>)) {
            const vals = Array.isArray(v) ? v : [v];
            extra[k] = vals.filter((x): x is string => typeof x === 'string');
          }
          if (Object.keys(extra).length) user.extra = extra;
        }
        resolve({ authenticated: true, user });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`timed out after ${TIMEOUT_MS / 1000}s`)));
    req.on('error', reject);
    req.end(body);
  });
}

const plugin: PluginModule<'authenticator'> = {
  kind: 'authenticator',
  contract: CONTRACT_VERSION,
  name: 'webhook',
  create(options, host: PluginHost): Authenticator {
    if (typeof options.configFile !== 'string' || !options.configFile) throw new Error('options.configFile (--authentication-token-webhook-config-file) is required');
    const ttl = options.cacheTTLSeconds ?? DEFAULT_CACHE_TTL_SECONDS;
    if (typeof ttl !== 'number' || !(ttl >= 0)) throw new Error('options.cacheTTLSeconds must be a number of seconds, 0 or more');
    const version = options.version ?? 'v1beta1';
    if (version !== 'v1beta1' && version !== 'v1') throw new Error(`options.version (--authentication-token-webhook-version) must be v1beta1 or v1, got "${String(version)}"`);
    const client = readClientConfig(options.configFile);
    const apiVersion = `authentication.${host.brand.domain}/${version}`;
    const agent = new https.Agent({ keepAlive: true, maxSockets: 32 });
    const cache = new Map<string, { review: Review; expires: number }>();
    const pending = new Map<string, Promise<Review>>();

    const review = async (token: string): Promise<Review> => {
      const key = createHash('sha256').update(token).digest('base64url');
      const hit = cache.get(key);
      if (hit && hit.expires > Date.now()) return hit.review;
      if (hit) cache.delete(key);
      // concurrent requests with one token share one call
      let p = pending.get(key);
      if (!p) {
        p = postReview(client, agent, apiVersion, token).then((r) => {
          if (ttl > 0) {
            if (cache.size >= MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
            cache.set(key, { review: r, expires: Date.now() + ttl * 1000 });
          }
          return r;
        }).finally(() => pending.delete(key));
        pending.set(key, p);
      }
      return p;
    };

    return {
      async authenticate(req) {
        const token = bearerToken(req.header('authorization'));
        if (token === undefined) return null;
        let r: Review;
        try {
          r = await review(token);
        } catch (e) {
          host.log.warn('token webhook failed', { server: client.url.href, error: (e as Error).message });
          return { rejected: `token webhook: ${(e as Error).message}` };
        }
        return r.authenticated ? { user: structuredClone(r.user) } : { rejected: r.error };
      },
      async close() {
        agent.destroy();
      },
    };
  },
};

export default plugin;
