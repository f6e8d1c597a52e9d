// The webhook configurations in force: read from storage once, then kept current from the kernel's
// change feed (host.objects.watch), so a new or changed configuration applies to the next request.
// v1 and v1beta1 objects share one storage prefix (see v1beta1-types.ts); each object is read with
// the defaults of the version that wrote it, in case it was stored without them.
import { brandGroup } from '../../../kernel/contracts/brand.js';
import type { KObject, PluginHost, TypeDef } from '../../../kernel/contracts/index.js';
import { labelSelectorFromStructured, type LabelSelector, type StructuredLabelSelector } from '../../../kernel/api/selectors.js';

/** AdmissionReview versions this server sends, in the order it prefers them. */
export const SUPPORTED_REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type ReviewVersion = (typeof SUPPORTED_REVIEW_VERSIONS)[number];

export interface WebhookRule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope: string;
}

export interface ClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path: string; port: number };
  /** PEM CA bundle (decoded caBundle); undefined means the host's roots. */
  ca?: string;
}

/** One webhook of one configuration, with defaults filled in and selectors parsed. */
export interface Webhook {
  /** Identity across rebuilds: configuration uid, the webhook's position and name. */
  key: string;
  configuration: string;
  name: string;
  /** Position in the ordered list of all webhooks of this kind (the audit annotations' index). */
  index: number;
  mutating: boolean;
  rules: WebhookRule[];
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Exact' | 'Equivalent';
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  /** Why a selector could not be parsed (the call then fails as an internal error). */
  selectorError?: string;
  sideEffects: string;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  /** The first of admissionReviewVersions this server supports; undefined when none is. */
  reviewVersion?: ReviewVersion;
  reinvocationPolicy: 'Never' | 'IfNeeded';
  clientConfig: ClientConfig;
  /** Fingerprint of everything the HTTP client depends on (connection reuse). */
  clientKey: string;
}

type J = Record<string, any>;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function selector(v: unknown): LabelSelector {
  // Unset and {} both select everything here: the defaults make every stored selector an object.
  return labelSelectorFromStructured((isObj(v) ? v : {}) as StructuredLabelSelector);
}

/** Reads one configuration object's webhooks. */
export function readWebhooks(obj: KObject, mutating: boolean): Omit<Webhook, 'index'>[] {
  const beta = typeof obj.apiVersion === 'string' && obj.apiVersion.endsWith('/v1beta1');
  const cfgName = obj.metadata?.name ?? '';
  const uid = obj.metadata?.uid ?? cfgName;
  const out: Omit<Webhook, 'index'>[] = [];
  (Array.isArray(obj.webhooks) ? obj.webhooks : []).forEach((w: unknown, i: number) => {
    if (!isObj(w)) return;
    const cc = isObj(w.clientConfig) ? w.clientConfig : {};
    const client: ClientConfig = {};
    if (typeof cc.url === 'string' && cc.url) client.url = cc.url;
    else if (isObj(cc.service)) {
      const s = cc.service;
      client.service = { namespace: String(s.namespace ?? ''), name: String(s.name ?? ''), path: typeof s.path === 'string' && s.path ? s.path : '/', port: Number.isInteger(s.port) ? s.port : 443 };
    }
    if (typeof cc.caBundle === 'string' && cc.caBundle) client.ca = Buffer.from(cc.caBundle, 'base64').toString('utf8');
    const versions = strings(w.admissionReviewVersions);
    const reviewVersions = versions.length ? versions : beta ? ['v1beta1'] : [];
    let namespaceSelector: LabelSelector, objectSelector: LabelSelector, selectorError: string | undefined;
    try {
      namespaceSelector = selector(w.namespaceSelector);
      objectSelector = selector(w.objectSelector);
    } catch (e) {
      namespaceSelector = objectSelector = { requirements: [], nothing: true };
      selectorError = (e as Error).message;
    }
    const name = typeof w.name === 'string' ? w.name : '';
    const rules = (Array.isArray(w.rules) ? w.rules : []).filter(isObj).map((r: J) => ({
      operations: strings(r.operations), apiGroups: strings(r.apiGroups), apiVersions: strings(r.apiVersions), resources: strings(r.resources),
      scope: typeof r.scope === 'string' && r.scope ? r.scope : '*',
    }));
    const hook: Omit<Webhook, 'index'> = {
      key: `${uid}/${i}/${name}`,
      configuration: cfgName,
      name,
      mutating,
      rules,
      failurePolicy: w.failurePolicy === 'Ignore' || w.failurePolicy === 'Fail' ? w.failurePolicy : beta ? 'Ignore' : 'Fail',
      matchPolicy: w.matchPolicy === 'Exact' || w.matchPolicy === 'Equivalent' ? w.matchPolicy : beta ? 'Exact' : 'Equivalent',
      namespaceSelector,
      objectSelector,
      selectorError,
      sideEffects: typeof w.sideEffects === 'string' && w.sideEffects ? w.sideEffects : beta ? 'Unknown' : '',
      timeoutSeconds: Number.isInteger(w.timeoutSeconds) && w.timeoutSeconds >= 1 ? Math.min(w.timeoutSeconds, 30) : beta ? 30 : 10,
      admissionReviewVersions: reviewVersions,
      reviewVersion: reviewVersions.find((v): v is ReviewVersion => (SUPPORTED_REVIEW_VERSIONS as readonly string[]).includes(v)),
      reinvocationPolicy: mutating && w.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
      clientConfig: client,
      clientKey: JSON.stringify([uid, i, name, client]),
    };
    out.push(hook);
  });
  return out;
}

/** The resources of webhook configurations: never sent to webhooks themselves (no lock-out). */
export function isWebhookConfigurationResource(brandDomain: string, group: string, resource: string): boolean {
  return group === `admissionregistration.${brandDomain}` && (resource === 'mutatingwebhookconfigurations' || resource === 'validatingwebhookconfigurations');
}

/** The live list of one kind's webhooks, ordered by configuration name, then position. */
export class WebhookSource {
  private type: TypeDef | undefined;
  private configs = new Map<string, KObject>();
  private loaded = false;
  private unwatch: (() => void) | undefined;
  /** Every webhook in order; replaced (never mutated) when a configuration changes. */
  hooks: Webhook[] = [];
  /** Called after each rebuild with the new list (the client drops connections of removed webhooks). */
  onChange: (hooks: Webhook[]) => void = () => {};

  constructor(private host: PluginHost, readonly mutating: boolean) {
    const group = brandGroup(host.brand, 'admissionregistration.cluster.io');
    const resource = mutating ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
    this.type = host.type(group, resource);
    if (!this.type) {
      this.loaded = true; // the API is not served: never any webhook
      return;
    }
    this.unwatch = host.objects.watch(this.type, (ev, obj) => {
      if (!this.loaded) return; // the first list will see it
      const name = obj.metadata?.name ?? '';
      if (ev === 'DELETED') this.configs.delete(name);
      else this.configs.set(name, obj);
      this.rebuild();
    });
  }

  /** Whether the list may hold webhooks (true until the first read, so nothing slips through). */
  maybeAny(): boolean {
    return !this.loaded || this.hooks.length > 0;
  }

  /** Reads the stored configurations the first time (the object store is ready only once requests flow). */
  async ensure(): Promise<void> {
    if (this.loaded || !this.type) return;
    const all = await this.host.objects.list(this.type);
    if (this.loaded) return;
    for (const o of all) this.configs.set(o.metadata?.name ?? '', o);
    this.loaded = true;
    this.rebuild();
  }

  private rebuild(): void {
    const names = [...this.configs.keys()].sort();
    const hooks: Webhook[] = [];
    for (const n of names) for (const h of readWebhooks(this.configs.get(n)!, this.mutating)) hooks.push({ ...h, index: hooks.length });
    this.hooks = hooks;
    this.onChange(hooks);
  }

  close(): void {
    this.unwatch?.();
  }
}
