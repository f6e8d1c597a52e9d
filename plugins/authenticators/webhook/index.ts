// Token webhook (--authentication-token-webhook-config-file): bearer tokens are sent to a remote
// service as a TokenReview (authentication.<domain>/v1beta1 by default, or v1) over HTTPS, with the
// server, CA and client credentials taken from a kubeconfig-format file. Answers, positive and
// negative, are cached per token hash for --authentication-token-webhook-cache-ttl (default 2m);
// failures (timeouts, bad status, unreadable answers) reject the request and are not cached.
import { createHash } from 'node:crypto';
import https from 'node:https';
import { CONTRACT_VERSION, type Authenticator, type PluginHost, type PluginModule, type UserInfo } from '../../../kernel/contracts/index.js';
import { bearerToken } from '../token-file/index.js';
import { postJSON, readClientConfig, type WebhookClient } from '../../lib/webhook-client.js';

const TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 1 << 20;
const MAX_CACHE_ENTRIES = 10_000;
export const DEFAULT_CACHE_TTL_SECONDS = 120;

export type { WebhookClient };

/** Reads the token webhook's client configuration (kubeconfig format). */
export const readTokenWebhookConfig = (file: string): WebhookClient => readClientConfig(file, 'token webhook config');

/** What a review says, or why there is no answer. */
export type Review = { authenticated: true; user: UserInfo } | { authenticated: false; error: string };

/** One TokenReview round trip. Throws on transport failures, non-2xx statuses and unreadable answers. */
export async function postReview(client: WebhookClient, agent: https.Agent, apiVersion: string, token: string): Promise<Review> {
  const body = JSON.stringify({ apiVersion, kind: 'TokenReview', spec: { token } });
  const review = (await postJSON(client, agent, body, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_RESPONSE_BYTES })) as { status?: { authenticated?: unknown; user?: Record<string, unknown>; error?: unknown } };
  const st = review?.status ?? {};
  if (st.authenticated !== true) return { authenticated: false, error: typeof st.error === 'string' && st.error ? st.error : 'token not authenticated by the webhook' };
  const u = st.user ?? {};
  if (typeof u.username !== 'string' || !u.username) throw new Error('authenticated answer without a user name');
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
  return { authenticated: true, user };
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
    const client = readTokenWebhookConfig(options.configFile);
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
