// The PluginHost the server gives every plugin: the catalog, objects, errors, authorization and
// authentication, the paths and sub-resources plugins serve, run-time types, remote group-versions,
// and each plugin's durable state.
import type { Brand } from '../contracts/brand.js';
import type {
  AuthorizationAttributes, AuthorizationDecision, ObjectClient, PluginHost, PluginMetrics, PluginState, RemoteGroupVersion, Signer, StorageBackend, TypeDef, UserInfo,
} from '../contracts/index.js';
import { errors, StatusError } from '../contracts/status.js';
import type { KRequest, KResponse } from '../http/types.js';
import type { TypeRegistry } from '../api/catalog.js';
import type { ResourceEndpoints } from '../api/endpoints/resources.js';
import type { Registry } from '../api/registry/registry.js';
import type { Config } from '../ops/config.js';
import type { ServerLogger } from '../ops/logging.js';
import type { ObjectCache } from '../store/cache.js';
import type { WatchHub } from '../watch/fanout.js';

/** What the host needs of the server; the parts made during start-up are asked for when used. */
export interface HostContext {
  readonly brand: Brand;
  readonly config: Config;
  readonly loops: number;
  readonly log: ServerLogger;
  readonly featureGates: Record<string, boolean>;
  readonly metrics: PluginMetrics;
  readonly cache: ObjectCache;
  readonly hub: WatchHub;
  readonly objects: ObjectClient;
  /** Where the sub-resources plugins serve are registered. */
  readonly resources: Pick<ResourceEndpoints, 'serveVirtual' | 'serveStream' | 'serveConnect'>;
  types(): TypeRegistry | undefined;
  registry(): Registry;
  backend(): StorageBackend;
  signers(): Signer[];
  decide(attrs: AuthorizationAttributes): Promise<AuthorizationDecision>;
  authenticateToken(token: string): Promise<UserInfo | undefined>;
  frontProxy(): { certPem: string; keyPem: string; caPem?: string } | undefined;
  /** The served API changed (types or remote group-versions): the OpenAPI documents are built again. */
  apiChanged(): void;
}

export class Host {
  /** Group-versions other servers serve (aggregation), by "<group>/<version>". */
  readonly remotes = new Map<string, { owner: string; remote: RemoteGroupVersion }>();
  /** Non-resource GET paths plugins answer. */
  private readonly paths = new Map<string, () => { contentType: string; body: string }>();
  private readonly typeListeners: (() => void)[] = [];

  constructor(private readonly ctx: HostContext) {}

  /** The object given to plugins. */
  api(): PluginHost {
    const ctx = this.ctx;
    return {
      brand: ctx.brand,
      dataDir: ctx.config.dataDir,
      loops: ctx.loops,
      log: ctx.log,
      type: (group, resource) => ctx.types()?.byGroup(group, resource),
      allTypes: () => ctx.types()?.all ?? [],
      objects: ctx.objects,
      errors: {
        forbidden: (m) => errors.forbidden(m),
        invalid: (kind, name, causes, group = '') => errors.invalid(group, kind, name, causes),
        admissionForbidden: (a, msg) => errors.forbiddenObject(a.resource.group, a.resource.resource, a.name || a.object?.metadata?.name || '', msg),
        status: (code, reason, msg) => new StatusError(code, reason, msg),
        notFound: (group, resource, name) => errors.notFound(group, resource, name),
      },
      featureGates: ctx.featureGates,
      authorize: (attrs) => ctx.decide(attrs),
      authenticateToken: (token) => ctx.authenticateToken(token),
      serve: (route, handler) => ctx.resources.serveVirtual(route, handler),
      guardWrites: (group, resource, guard) => ctx.registry().addGuard(group, resource, guard),
      servePath: (p, handler) => { this.paths.set(p, handler); },
      metrics: ctx.metrics,
      serveTypes: (owner, types) => this.serveTypes(owner, types),
      onTypesChanged: (l) => { this.typeListeners.push(l); },
      state: (owner) => this.pluginState(owner),
      serveStream: (route, handler) => ctx.resources.serveStream(route, handler),
      serveConnect: (route, handler) => ctx.resources.serveConnect(route, handler),
      signers: () => ctx.signers(),
      serveRemote: (owner, remotes) => this.serveRemote(owner, remotes),
      frontProxyClient: () => {
        const fp = ctx.frontProxy();
        if (!fp) throw new Error('the front-proxy client certificate is made at start; ask for it from start() on');
        return fp;
      },
      authenticatorOptions: (plugin) => ctx.config.authentication.find((r) => r.plugin === plugin)?.options ?? (ctx.config.authentication.some((r) => r.plugin === plugin) ? {} : undefined),
      storageHealth: () => { const b = ctx.backend(); return { name: (b.health ?? { name: ctx.brand.storageCheck }).name, healthy: b.ready?.() !== false }; },
    };
  }

  /** A path a plugin serves (PluginHost.servePath), answered on the wire (a HEAD without the body); false for any other. */
  answerPath(req: KRequest, res: KResponse): boolean {
    const served = this.paths.get(req.path);
    if (!served) return false;
    const out = served();
    res.send(200, { 'content-type': out.contentType }, req.method === 'HEAD' ? '' : out.body);
    return true;
  }

  /** The group-versions other servers serve. */
  remoteList(): RemoteGroupVersion[] {
    return [...this.remotes.values()].map((r) => r.remote);
  }

  private serveRemote(owner: string, remotes: RemoteGroupVersion[]): void {
    for (const [k, v] of this.remotes) if (v.owner === owner) this.remotes.delete(k);
    for (const r of remotes) this.remotes.set(`${r.group}/${r.version}`, { owner, remote: r });
    this.ctx.apiChanged();
  }

  /** A plugin's durable records live in the storage log under /~state/<owner>/, where no type's prefix reaches. */
  private pluginState(owner: string): PluginState {
    const prefix = `/~state/${owner}/`;
    const backend = () => this.ctx.backend();
    return {
      list: async () => (await backend().range(prefix)).map((kv) => ({ key: kv.key.slice(prefix.length), value: Buffer.from(kv.value).toString('utf8') })),
      create: async (key, value) => {
        const r = await backend().write({ type: 'create', key: prefix + key, value: () => Buffer.from(value) });
        return r.ok;
      },
      delete: async (key) => {
        for (;;) {
          const kv = await backend().get(prefix + key);
          if (!kv) return;
          const r = await backend().write({ type: 'delete', key: prefix + key, expectRevision: kv.modRevision });
          if (r.ok || r.reason === 'not-found') return;
        }
      },
    };
  }

  /** Run-time types (PluginHost.serveTypes): the catalog, the cache, the OpenAPI documents and watches follow. */
  private serveTypes(owner: string, types: TypeDef[]): void {
    const { cache, hub } = this.ctx;
    const gone = this.ctx.types()!.replace(owner, types);
    for (const t of types) cache.register(t);
    for (const t of gone) hub.closeAll(cache.forType(t));
    this.ctx.apiChanged();
    for (const l of this.typeListeners) {
      try { l(); } catch (e) { this.ctx.log.warn('types-changed listener failed', { error: String(e) }); }
    }
  }
}
