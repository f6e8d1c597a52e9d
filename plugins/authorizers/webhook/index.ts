// Webhook (--authorization-mode=Webhook, --authorization-webhook-config-file): each decision is asked
// of a remote service as a SubjectAccessReview (authorization.<domain>/v1beta1 by default, or v1)
// POSTed over HTTPS to the server of a kubeconfig-format file, with its CA and client credentials.
// status.allowed → allow, status.denied → deny, neither → no opinion. Answers are cached by the
// request's attributes (allowed ones for --authorization-webhook-cache-authorized-ttl, default 5m;
// others for --authorization-webhook-cache-unauthorized-ttl, default 30s). Failures are logged and
// have no opinion (and are not cached).
import https from 'node:https';
import { CONTRACT_VERSION, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer, type PluginModule } from '../../../kernel/contracts/index.js';
import { registerRulesResolver } from '../rbac/resolvers.js';
import { postJSON, readClientConfig, type WebhookClient } from '../../lib/webhook-client.js';

const TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 1 << 20;
const MAX_CACHE_ENTRIES = 10_000;
export const DEFAULT_AUTHORIZED_TTL_SECONDS = 300;
export const DEFAULT_UNAUTHORIZED_TTL_SECONDS = 30;

export type WebhookTarget = WebhookClient;

type Entry = Record<string, unknown>;

/** The authorization webhook's client configuration (kubeconfig format). */
export const readWebhookConfig = (file: string): WebhookTarget => readClientConfig(file, 'authorization webhook config');

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

const post = async (t: WebhookTarget, agent: https.Agent, body: string): Promise<Entry> =>
  (await postJSON(t, agent, body, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_RESPONSE_BYTES })) as Entry;

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
