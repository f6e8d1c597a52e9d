// The server: loads the plugins the configuration names, warms the object cache from storage,
// and runs every request through authenticate → authorize → admit → store.
import { warningValue } from './api/warnings.js';
import path from 'node:path';
import { getBrand, type Brand } from './contracts/brand.js';
import type { Config } from './ops/config.js';
import type { RemoteGroupVersion, AdmissionPlugin, AuditBackend, StorageEvent, AuthRequest, AuthorizationAttributes, AuthorizationDecision, VirtualHandler, VirtualRoute, StreamHandler, ConnectHandler, ConnectRoute, Authenticator, Authorizer, Controller, Signer, KObject, PluginHost, StorageBackend, TypeDef, TypeProvider, UserInfo, ObjectClient, RequestInfo, FlowControl, FlowRequest } from './contracts/index.js';
import { AdmissionChain, readAdmissionConfig } from './pipeline/admission.js';
import { resolveFeatureGates } from './ops/features.js';
import { aggregatedAccept, aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions, withRemoteGroups } from './api/discovery.js';
import { createHash } from 'node:crypto';
import { Health } from './ops/health.js';
import type { KRequest, KResponse, Listener } from './http/types.js';
import { listenUws, uwsLoadError } from './http/uws.js';
import { closeWorkers } from '../workers/pool.js';
import { listenNodeTls, listenUpgradeBackend } from './http/node.js';
import { listenFront, PeerTable, privateSocketPath } from './http/front.js';
import { loadAll, loadPlugin, preloadPlugins } from './host/loader.js';
import { ensureAdminClientCert, ensureFrontProxyClient, ensurePki, writeKubeconfig } from './ops/pki.js';
import { firstAddress } from './ops/ipnet.js';
import { proxyRequest, proxyStream } from './api/proxy.js';
import { Registry, type Target } from './api/registry/registry.js';
import { requestInfo } from './pipeline/requestinfo.js';
import { encodeAs, negotiate } from './api/repr/negotiate.js';
import { isProtobufType, objectProtobuf, statusProtobuf } from './api/repr/protobuf.js';
import { dropNullFields } from './api/fieldvalidation.js';
import { checkWriteOptions, queryTimeoutMs } from './api/options.js';
import { OpenAPIService } from './api/openapi/index.js';
import { errors, isStatusError, StatusError } from './contracts/status.js';
import { ObjectCache, resourcePrefix, type Entry } from './store/cache.js';
import { TypeRegistry } from './api/catalog.js';
import { WatchHub } from './watch/fanout.js';
import { LeaderElector } from './ops/leader.js';
import { prepareDataDir, type DataDirLock } from './ops/datadir.js';
import { makeLogger, type ServerLogger } from './ops/logging.js';
import { loadEncryptionConfig } from './ops/encryption.js';
import { StoreDamageError } from './store/integrity.js';
import { Auditor, type AuditContext } from './ops/audit.js';
import { ResponseTap, ServerMetrics } from './ops/metrics.js';
import { OutputBudget } from './watch/outbudget.js';

export const SYSTEM_USER: UserInfo = { username: 'system:apiserver', uid: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };

/** How often history older than the retention window is compacted. */
const COMPACT_INTERVAL_MS = 10_000;
/** A watcher whose socket has this much queued is closed (it resumes from its last revision). 16 MiB holds a few thousand large events. */
const WATCH_BUDGET_BYTES = Number(process.env.CAPI_WATCH_BUDGET_BYTES ?? 16 * 1024 * 1024);
/** Bytes all watchers together may have queued on backed-up sockets (docs/operations.md, Limits). */
const OUTPUT_BUDGET_BYTES = Number(process.env.CAPI_OUTPUT_BUDGET_BYTES ?? 256 * 1024 * 1024);
/** Bookmarks about once a minute, as the reference sends them; tests shorten it. */
const BOOKMARK_INTERVAL_MS = Number(process.env.CAPI_BOOKMARK_INTERVAL_MS ?? 60_000);

/** Sub-resources the reference counts as long-running: held open, never limited by flow control. */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** What the timeout and the pipeline share about one request. */
interface RunState { timedOut: boolean; user?: UserInfo; release?: () => void }

/** The reference's timeout answer: its timeout writer JSON-encodes the bare Status (no kind or apiVersion), newline-terminated. */
const REQUEST_TIMEOUT_BODY = `${JSON.stringify({ metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 })}\n`;

/** 'timeout' when `work` has not settled within `ms`; its outcome (or rejection) otherwise. */
async function settleWithin(work: Promise<void>, ms: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((r) => { timer = setTimeout(() => r('timeout'), ms); });
  try {
    return await Promise.race([work.then(() => 'done' as const), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export class Server {
  readonly brand: Brand;
  readonly log: ServerLogger;
  readonly cache = new ObjectCache();
  readonly hub = new WatchHub();
  readonly health: Health;
  backend!: StorageBackend;
  types!: TypeRegistry;
  registry!: Registry;
  private authenticators: { name: string; plugin: Authenticator }[] = [];
  private authorizers: { name: string; plugin: Authorizer }[] = [];
  private admission = new AdmissionChain([]);
  private controllers: { name: string; plugin: Controller }[] = [];
  private typeProviders: TypeProvider[] = [];
  /** Set when controllers run under leader election. */
  private elector: LeaderElector | undefined;
  signers: Signer[] = [];
  private listeners: Listener[] = [];
  private internalWatchers = new Map<string, Set<(t: 'ADDED' | 'MODIFIED' | 'DELETED', o: KObject) => void>>();
  private compactTimer: NodeJS.Timeout | undefined;
  private revSamples: { at: number; rev: number }[] = [];
  private inFlight = 0;
  private shuttingDown = false;
  readonly watches = new Set<() => void>();
  port = 0;
  mtlsPort = 0;
  /** Whether the secure port takes client certificates (through the node:tls front). */
  certsOnSecurePort = false;
  adminToken = '';
  caFile = '';
  kubeconfigPath = '';
  /** https://host:port the main listener serves, once started. */
  url = '';
  private dataLock: DataDirLock | undefined;

  readonly featureGates: Record<string, boolean>;
  /** /metrics; plugins register theirs through PluginHost.metrics. */
  readonly metrics = new ServerMetrics({
    served: (group, version, resource) => !!this.types?.lookup(group, version, resource),
    caches: () => new Set((this.types?.all ?? []).map((t) => this.cache.forType(t))),
    currentRevision: () => this.backend?.currentRevision() ?? 0,
    compactedRevision: () => this.backend?.compactedRevision() ?? 0,
  });
  /** Set when audit backends are configured; undefined keeps the request path free of audit work. */
  private auditor: Auditor | undefined;
  /** Overload protection (API Priority and Fairness or the in-flight limits). */
  private flowControl: FlowControl | undefined;

  constructor(readonly config: Config) {
    this.brand = getBrand(config.brand);
    this.log = makeLogger(config.loggingFormat, config.verbosity);
    this.featureGates = resolveFeatureGates(config.featureGates);
    this.health = new Health(config.livezGracePeriodSeconds);
  }

  private host(): PluginHost {
    return {
      brand: this.brand,
      dataDir: this.config.dataDir,
      log: this.log,
      type: (group, resource) => this.types?.byGroup(group, resource),
      allTypes: () => this.types?.all ?? [],
      objects: this.objectClient(),
      errors: {
        forbidden: (m) => errors.forbidden(m),
        invalid: (kind, name, causes, group = '') => errors.invalid(group, kind, name, causes),
        admissionForbidden: (a, msg) => errors.forbiddenObject(a.resource.group, a.resource.resource, a.name || a.object?.metadata?.name || '', msg),
        status: (code, reason, msg) => new StatusError(code, reason, msg),
        notFound: (group, resource, name) => errors.notFound(group, resource, name),
      },
      featureGates: this.featureGates,
      authorize: (attrs) => this.decide(attrs),
      authenticateToken: (token) => this.authenticateToken(token),
      serve: (route, handler) => this.serveVirtual(route, handler),
      guardWrites: (group, resource, guard) => this.registry.addGuard(group, resource, guard),
      servePath: (p, handler) => { this.paths.set(p, handler); },
      metrics: this.metrics.registry,
      serveTypes: (owner, types) => this.serveTypes(owner, types),
      onTypesChanged: (l) => { this.typeListeners.push(l); },
      state: (owner) => this.pluginState(owner),
      serveStream: (route, handler) => this.serveStream(route, handler),
      serveConnect: (route, handler) => this.serveConnect(route, handler),
      signers: () => this.signers,
      serveRemote: (owner, remotes) => this.serveRemote(owner, remotes),
      frontProxyClient: () => {
        if (!this.frontProxy) throw new Error('the front-proxy client certificate is made at start; ask for it from start() on');
        return this.frontProxy;
      },
      authenticatorOptions: (plugin) => this.config.authentication.find((r) => r.plugin === plugin)?.options ?? (this.config.authentication.some((r) => r.plugin === plugin) ? {} : undefined),
      storageHealth: () => ({ name: (this.backend.health ?? { name: 'storage' }).name, healthy: this.backend.ready?.() !== false }),
    };
  }

  /** Group-versions other servers serve (aggregation), by "<group>/<version>". */
  private remotes = new Map<string, { owner: string; remote: RemoteGroupVersion }>();
  private frontProxy: { certPem: string; keyPem: string; caPem?: string } | undefined;

  private serveRemote(owner: string, remotes: RemoteGroupVersion[]): void {
    for (const [k, v] of this.remotes) if (v.owner === owner) this.remotes.delete(k);
    for (const r of remotes) this.remotes.set(`${r.group}/${r.version}`, { owner, remote: r });
    this.openapi?.reset();
  }

  /** The OpenAPI v3 documents extension servers published, by discovery path. */
  private *remoteOpenAPI(): Iterable<[string, string]> {
    for (const { remote } of this.remotes.values()) {
      const doc = remote.openapiV3?.();
      if (doc) yield [`apis/${remote.group}/${remote.version}`, doc];
    }
  }

  /** /apis/<group>/<version>/... of a group-version another server serves: relayed as the authorized user. */
  private async proxyRemote(req: KRequest, res: KResponse, remote: RemoteGroupVersion, user: UserInfo, delegated: () => void): Promise<void> {
    const target = await remote.target();
    // As the reference does, the extension server does its own flow control: the seat goes back now.
    delegated();
    return proxyRequest(req, res, target, user, { maxBodyBytes: this.config.maxRequestBodyBytes });
  }

  /** A plugin's durable records live in the storage log under /~state/<owner>/, where no type's prefix reaches. */
  private pluginState(owner: string): import('./contracts/index.js').PluginState {
    const prefix = `/~state/${owner}/`;
    return {
      list: async () => (await this.backend.range(prefix)).map((kv) => ({ key: kv.key.slice(prefix.length), value: Buffer.from(kv.value).toString('utf8') })),
      create: async (key, value) => {
        const r = await this.backend.write({ type: 'create', key: prefix + key, value: () => Buffer.from(value) });
        return r.ok;
      },
      delete: async (key) => {
        for (;;) {
          const kv = await this.backend.get(prefix + key);
          if (!kv) return;
          const r = await this.backend.write({ type: 'delete', key: prefix + key, expectRevision: kv.modRevision });
          if (r.ok || r.reason === 'not-found') return;
        }
      },
    };
  }

  /** Run-time types (PluginHost.serveTypes): the catalog, the cache, the OpenAPI documents and watches follow. */
  private serveTypes(owner: string, types: TypeDef[]): void {
    const gone = this.types.replace(owner, types);
    for (const t of types) this.cache.register(t);
    for (const t of gone) this.hub.closeAll(this.cache.forType(t));
    this.openapi?.reset();
    for (const l of this.typeListeners) {
      try { l(); } catch (e) { this.log.warn('types-changed listener failed', { error: String(e) }); }
    }
  }
  private typeListeners: (() => void)[] = [];

  private virtualHandlers = new Map<string, VirtualHandler>();
  /** Non-resource GET paths plugins answer. */
  private paths = new Map<string, () => { contentType: string; body: string }>();
  /** Published OpenAPI documents, built at the first request. */
  private openapi?: OpenAPIService;

  private streamHandlers = new Map<string, StreamHandler>();
  /** A plugin serves a streamed GET sub-resource of a stored type (see PluginHost.serveStream). */
  private serveStream(route: VirtualRoute, handler: StreamHandler): void {
    const sub = route.subresource;
    for (const t of this.types.versions(route.group, route.resource)) {
      t.subresources = [...(t.subresources ?? []).filter((x) => x !== sub), sub];
      t.subresourceInfo = { ...t.subresourceInfo, [sub]: { verbs: ['get'], kind: route.kind } };
      this.streamHandlers.set(`${t.group}/${t.version}/${t.resource}/${sub}`, handler);
    }
  }

  private connectHandlers = new Map<string, { handler: ConnectHandler; route: ConnectRoute }>();
  /** A plugin serves a CONNECT sub-resource of a stored type (see PluginHost.serveConnect). */
  private serveConnect(route: ConnectRoute, handler: ConnectHandler): void {
    for (const t of this.types.versions(route.group, route.resource)) {
      if (!t.connectSubresources?.includes(route.subresource)) throw new Error(`cannot serve ${route.resource}/${route.subresource}: not a connect sub-resource of the type`);
      this.connectHandlers.set(`${t.group}/${t.version}/${t.resource}/${route.subresource}`, { handler, route });
    }
  }

  /** Paths of CONNECT sub-resources (any type's), as a regular expression's source: where the TLS front sends upgrades. */
  private connectRoute(): string {
    const subs = new Set(this.types.all.flatMap((t) => t.connectSubresources ?? []));
    const names = [...subs].map((x) => x.replace(/[^A-Za-z0-9-]/g, '')).filter(Boolean);
    return `^/(?:api|apis/[^/?]+)/[^/?]+/(?:namespaces/[^/?]+/)?[^/?]+/[^/?]+/(?:${names.join('|') || '(?!)'})(?:[/?]|$)`;
  }

  /** A plugin serves a create sub-resource of a stored type (see PluginHost.serve). */
  private serveVirtual(route: VirtualRoute, handler: VirtualHandler): void {
    const sub = route.subresource;
    const versions = this.types.versions(route.group, route.resource);
    if (!versions.length) throw new Error(`cannot serve ${route.resource}/${sub}: no type ${route.resource} in group "${route.group}"`);
    for (const t of versions) {
      t.subresources = [...(t.subresources ?? []).filter((x) => x !== sub), sub];
      t.subresourceInfo = { ...t.subresourceInfo, [sub]: { verbs: ['create'], kind: route.kind, group: route.subresourceGroup, version: route.subresourceVersion } };
      this.virtualHandlers.set(`${t.group}/${t.version}/${t.resource}/${sub}`, handler);
    }
  }

  async start(): Promise<void> {
    const cfg = this.config;
    const configDir = cfg.configFile ? path.dirname(path.resolve(cfg.configFile)) : process.cwd();
    const host = this.host();
    // How long each step of start-up takes, at -v=2 (docs/operations.md, "Start-up time").
    let stepAt = performance.now();
    const step = (name: string) => {
      const now = performance.now();
      this.log.v(2, 'start-up step', { step: name, ms: Math.round(now - stepAt), sinceProcessStart: Math.round(now) });
      stepAt = now;
    };
    step('modules loaded');
    this.dataLock = prepareDataDir(cfg.dataDir, { brand: this.brand.name, allowInsecure: cfg.insecureDataDirPermissions });
    process.once('exit', () => this.dataLock?.release());
    // The serving certificate also names the server's own Service: its DNS names and first service IP.
    const svc = this.brand.name;
    const serviceNames = [svc, `${svc}.default`, `${svc}.default.svc`, `${svc}.default.svc.cluster.local`];
    const hosts = ['127.0.0.1', 'localhost', '::1', ...(cfg.bindAddress !== '127.0.0.1' && cfg.bindAddress !== '0.0.0.0' ? [cfg.bindAddress] : []), ...serviceNames, firstAddress(cfg.serviceClusterIPRange), ...(cfg.advertiseAddresses ?? [])];
    // Every configured plugin's module starts loading now; each is still created in its turn below.
    preloadPlugins([
      { kind: 'storage', ref: cfg.storage },
      { kind: 'flowcontrol', ref: cfg.flowControl },
      ...cfg.types.map((ref) => ({ kind: 'types' as const, ref })),
      ...cfg.authentication.map((ref) => ({ kind: 'authenticator' as const, ref })),
      ...cfg.authorization.map((ref) => ({ kind: 'authorizer' as const, ref })),
      ...cfg.admission.map((ref) => ({ kind: 'admission' as const, ref })),
      ...(cfg.audit ?? []).map((ref) => ({ kind: 'audit' as const, ref })),
      ...cfg.signers.map((ref) => ({ kind: 'signer' as const, ref })),
      ...cfg.controllers.map((ref) => ({ kind: 'controller' as const, ref })),
    ], configDir);
    // The credentials, the store and the type plugins do not depend on each other: they are made
    // ready at once, so the store's and the certificates' I/O overlap the loading of modules.
    const pkiReady = (async () => {
      const renewed = (msg: string, fields: Record<string, unknown>) => this.log.info(msg, fields);
      const pki = await ensurePki(cfg.dataDir, { hosts: [...new Set(hosts)], brand: this.brand, log: renewed });
      return { pki, frontProxy: await ensureFrontProxyClient(cfg.dataDir, cfg.proxyClient, renewed) };
    })();
    const typesReady = loadAll('types', cfg.types, host, { configDir });
    const storeReady = (async () => {
      if (cfg.encryptionProviderConfig) host.valueTransformer = await loadEncryptionConfig(cfg.encryptionProviderConfig);
      const backend = (await loadPlugin('storage', cfg.storage, host, { configDir })) as StorageBackend;
      try {
        await backend.open();
      } catch (e) {
        if (!(e instanceof StoreDamageError)) throw e;
        throw new Error(`the store is damaged: ${e.message}. Refusing to serve it, since acknowledged writes may be lost. ` +
          `With the server stopped, run: cluster-apiserver repair --data-dir ${cfg.dataDir} (plus the same --config, if any); ` +
          'it keeps every intact object and expires older resource versions (clients relist).');
      }
      return backend;
    })();
    // All three settle before any failure is reported: the first in this order, as when they ran one after another.
    const settled = await Promise.allSettled([pkiReady, typesReady, storeReady]);
    for (const r of settled) if (r.status === 'rejected') throw r.reason;
    const { pki, frontProxy } = await pkiReady;
    this.adminToken = pki.adminToken;
    this.caFile = pki.caFile;
    this.frontProxy = frontProxy;
    const providers = (this.typeProviders = (await typesReady) as TypeProvider[]);
    this.types = new TypeRegistry(providers.flatMap((p) => p.types(this.brand)), cfg.runtimeConfig);
    for (const t of this.types.all) this.cache.register(t);
    this.backend = await storeReady;
    step('PKI, types and storage (together)');
    // A shared store (etcd) goes on committing while the cache warms: its events wait here until the
    // snapshot below is loaded, then those after it are applied.
    let warming: { events: StorageEvent[]; rev: number } | undefined = { events: [], rev: 0 };
    this.backend.onCommit((events, rev) => {
      if (!warming) return this.cache.apply(events, rev);
      warming.events.push(...events);
      warming.rev = rev;
    });
    const snapshot = this.backend.currentRevision();
    for await (const kv of this.backend.all()) this.cache.load(kv.key, kv.value, kv.modRevision, kv.createRevision);
    this.cache.rev = snapshot;
    const history: StorageEvent[] = [];
    for await (const ev of this.backend.history(this.backend.compactedRevision())) if (ev.revision <= snapshot) history.push(ev);
    this.cache.preload(history, this.backend.compactedRevision());
    this.cache.onEvent = (ev, rc) => {
      this.hub.dispatch(ev, rc);
      const listeners = this.internalWatchers.get(resourcePrefix(rc.type));
      if (listeners?.size) {
        const obj = JSON.parse(ev.entry.bytes.toString('utf8')) as KObject;
        for (const l of listeners) l(ev.type, obj);
      }
    };
    this.cache.onBatch = () => this.hub.schedule();
    const early = warming!;
    warming = undefined;
    if (early.rev > snapshot) this.cache.apply(early.events.filter((e) => e.revision > snapshot), early.rev);

    step('cache loaded');
    // The registry exists before any plugin is created, so plugins may read objects and register
    // guards in create(); the admission chain is filled in once its plugins are loaded.
    this.registry = new Registry({
      brand: this.brand, backend: this.backend, cache: this.cache, admission: this.admission, hub: this.hub,
      maxBodyBytes: cfg.maxRequestBodyBytes, minWatchTimeoutSeconds: 1800, watches: this.watches,
      watchBudgetBytes: WATCH_BUDGET_BYTES, outputBudget: this.outputBudget(), bookmarkIntervalMs: BOOKMARK_INTERVAL_MS, featureGates: this.featureGates,
    });
    this.authenticators = await this.named('authenticator', cfg.authentication, host, configDir);
    this.authorizers = await this.named('authorizer', cfg.authorization, host, configDir);
    // Options from --admission-control-config-file reach each named admission plugin.
    const admissionConf = cfg.admissionConfigFile ? await readAdmissionConfig(cfg.admissionConfigFile, this.brand) : {};
    const admissionRefs = cfg.admission.map((r) => (admissionConf[r.plugin] ? { ...r, options: { ...r.options, ...admissionConf[r.plugin] } } : r));
    this.admission.plugins.push(...(await this.named<AdmissionPlugin>('admission', admissionRefs, host, configDir)));
    this.flowControl = await loadPlugin('flowcontrol', cfg.flowControl, host, { configDir });
    const auditBackends = await this.named<AuditBackend>('audit', cfg.audit ?? [], host, configDir);
    if (auditBackends.length) this.auditor = new Auditor(auditBackends, this.brand, this.log, this.metrics);
    this.metrics.instrumentWatchHub(this.hub);

    step('authentication, authorization, admission, flow control, audit plugins');
    // Signers are loaded (and so checked) now; the certificates API that calls them comes later.
    this.signers = (await loadAll('signer', cfg.signers, host, { configDir })) as Signer[];
    for (const p of providers) await p.start?.();
    // With a shared store, controllers run on the Lease holder only (those marked perServer, the
    // server's own, run everywhere); losing the Lease stops them, winning it again starts fresh instances.
    const created = await this.named<Controller>('controller', cfg.controllers, host, configDir);
    step('signers, type providers, controllers loaded');
    const le = cfg.leaderElection;
    const elect = le.enabled ?? !!this.backend.latestRevision;
    this.controllers = elect ? created.filter((c) => c.plugin.perServer) : created;
    for (const c of this.controllers) await c.plugin.start();
    if (elect) {
      const electedRefs = cfg.controllers.filter((_, i) => !created[i].plugin.perServer);
      let firstTerm: typeof created | undefined = created.filter((c) => !c.plugin.perServer);
      const leaseType = this.types.lookup(`coordination.${this.brand.domain}`, 'v1', 'leases');
      const nsType = this.types.lookup('', 'v1', 'namespaces');
      if (!leaseType || !nsType) throw new Error('leader election needs the Lease and Namespace types');
      const name = `${this.brand.name === 'kubernetes' ? 'kube' : this.brand.name}-controller-manager`;
      this.elector = new LeaderElector(host.objects, leaseType, nsType, this.brand.systemNamespace, name, le, {
        start: async () => {
          const term = firstTerm ?? (await this.named<Controller>('controller', electedRefs, host, configDir));
          firstTerm = undefined;
          this.controllers.push(...term);
          for (const c of term) await c.plugin.start();
        },
        stop: async () => {
          const term = this.controllers.filter((c) => !c.plugin.perServer);
          this.controllers = this.controllers.filter((c) => c.plugin.perServer);
          for (const c of term) await c.plugin.stop();
        },
      }, this.log);
      this.elector.start();
    }

    step('controllers started');
    this.health.add({ name: 'ping', live: true, ready: true, run: () => undefined });
    const sh = this.backend.health ?? { name: 'storage', live: true };
    this.health.add({ name: sh.name, live: sh.live, ready: true, run: () => (this.backend.ready?.() === false ? `${sh.name} not ready` : undefined) });
    this.health.add({ name: 'informer-sync', live: false, ready: true, run: () => (this.cache.rev < this.backend.currentRevision() ? 'cache behind storage' : undefined) });
    // The reference's post-start hooks by name, for the work this server did at start: the kernel's
    // own (admission chain, cache) and those its plugins stand for. All have run once it serves.
    const hooks = ['start-kube-apiserver-admission-initializer', 'generic-apiserver-start-informers'];
    for (const p of [...this.authorizers.map((a) => a.plugin), this.flowControl, ...this.typeProviders, ...this.controllers.map((c) => c.plugin)]) hooks.push(...(p?.postStartHooks ?? []));
    for (const name of new Set(hooks)) this.health.add({ name: `poststarthook/${name}`, live: true, ready: true, run: () => undefined });
    for (const [kind, list] of [['authenticator', this.authenticators], ['authorizer', this.authorizers], ['admission', this.admission.plugins], ['controller', this.controllers]] as const) {
      for (const p of list) if (p.plugin.ready) this.health.add({ name: `plugin/${kind}/${p.name}`, live: false, ready: true, run: () => (p.plugin.ready!() ? undefined : 'not ready') });
    }
    this.health.add({ name: 'shutdown', live: false, ready: true, run: () => (this.shuttingDown ? 'shutting down' : undefined) });

    const tls = { certFile: cfg.tls.certFile ?? pki.certFile, keyFile: cfg.tls.keyFile ?? pki.keyFile };
    const handler = (req: KRequest, res: KResponse) => this.handle(req, res);
    // Client certificates are requested and verified against every client CA the server knows: the
    // first-start CA plus each authenticator's `clientCAFile` option (--client-ca-file,
    // --requestheader-client-ca-file). Authenticators re-verify against their own CA.
    const clientCAFiles = [pki.caFile];
    for (const r of cfg.authentication) {
      const f = r.options?.clientCAFile;
      for (const file of typeof f === 'string' ? [f] : Array.isArray(f) ? f : []) if (typeof file === 'string' && !clientCAFiles.includes(file)) clientCAFiles.push(file);
    }
    const wantsCerts = cfg.authentication.some((r) => r.plugin === 'x509' || r.options?.clientCAFile !== undefined);
    this.certsOnSecurePort = cfg.securePortClientCerts ?? wantsCerts;
    const noUws = uwsLoadError();
    if (noUws) {
      // No uWebSockets.js binary for this Node.js or libc: Node's own TLS and HTTP serve the port,
      // client certificates included. Slower (docs/benchmarks.md, "Transports"), never a refusal.
      this.log.warn('uWebSockets.js does not load here: serving on Node\'s own TLS/HTTP stack, which answered about 60 % of the GETs per second of the uWebSockets.js transport, measured side by side on one machine (docs/benchmarks.md, "Transports by Node.js version")', { node: process.version, reason: noUws });
      const l = await listenNodeTls({ host: cfg.bindAddress, port: cfg.securePort, ...tls, clientCAFiles, handler });
      this.listeners.push(l);
      this.port = l.port;
      this.certsOnSecurePort = true;
    } else if (this.certsOnSecurePort) {
      // The secure port takes client certificates: node:tls in front, uWS behind it (http/front.ts).
      const sock = privateSocketPath();
      const peers = new PeerTable();
      const back = await listenUws({ host: '', port: 0, behindFront: { path: sock.path, peers }, handler });
      // upgrades on CONNECT paths (exec, attach, portforward, proxy) go to a node:http backend that can pass them through
      const upgrades = await listenUpgradeBackend({ path: sock.upgradePath, peers, handler });
      const front = await listenFront({ host: cfg.bindAddress, port: cfg.securePort, ...tls, clientCAFiles, peers }, sock.path, { path: sock.upgradePath, route: this.connectRoute() });
      this.listeners.push({ port: front.port, close: () => { front.close(); back.close(); upgrades.close(); sock.cleanup(); } });
      this.port = front.port;
    } else {
      const l = await listenUws({ host: cfg.bindAddress, port: cfg.securePort, tls, handler });
      this.listeners.push(l);
      this.port = l.port;
    }
    if (cfg.mtlsPort !== undefined) {
      // The optional separate node:tls listener (kernel/http/node.ts).
      const m = await listenNodeTls({ host: cfg.bindAddress, port: cfg.mtlsPort, ...tls, clientCAFiles, handler });
      this.listeners.push(m);
      this.mtlsPort = m.port;
    }
    step('listening');
    for (const c of this.controllers) await c.plugin.listening?.({ port: this.port });
    step('controllers told the port');
    this.kubeconfigPath = pki.kubeconfigPath;
    const hostForUrl = cfg.bindAddress === '0.0.0.0' ? '127.0.0.1' : cfg.bindAddress.includes(':') ? `[${cfg.bindAddress}]` : cfg.bindAddress;
    this.url = `https://${hostForUrl}:${this.port}`;
    const certPort = this.certsOnSecurePort ? this.port : this.mtlsPort;
    await Promise.all([
      writeKubeconfig(pki.kubeconfigPath, { server: this.url, caPem: pki.caCertPem, token: pki.adminToken }),
      // The same admin, by client certificate.
      certPort && cfg.authentication.some((r) => r.plugin === 'x509')
        ? ensureAdminClientCert(cfg.dataDir, pki.caCertPem, pki.caKeyPem, (msg, fields) => this.log.info(msg, fields)).then((cert) => writeKubeconfig(path.join(cfg.dataDir, 'admin-cert.kubeconfig'), { server: `https://${hostForUrl}:${certPort}`, caPem: pki.caCertPem, cert }))
        : undefined,
    ]);
    step('kubeconfigs written');
    // retentionSeconds 0 turns compaction off (--etcd-compaction-interval=0, as in the reference).
    const retentionMs = Number((cfg.storage.options as { retentionSeconds?: number } | undefined)?.retentionSeconds ?? 300) * 1000;
    if (retentionMs > 0) {
      this.compactTimer = setInterval(() => void this.compact(), Math.max(250, Math.min(COMPACT_INTERVAL_MS, retentionMs / 4)));
      this.compactTimer.unref();
    }
    this.log.info('serving', { address: `https://${hostForUrl}:${this.port}`, ...(this.mtlsPort ? { mtls: `https://${hostForUrl}:${this.mtlsPort}` } : {}), brand: this.brand.name, dataDir: cfg.dataDir, revision: this.cache.rev });
  }

  /**
   * The output budget watches and large list answers share; every stream it closes is logged, and
   * counted: watches as the reference counts them, lists in a counter of their own.
   */
  private outputBudget(): OutputBudget {
    const terminated = this.metrics.registry.counter('apiserver_terminated_watchers_total', 'Counter of watchers closed due to unresponsiveness broken by resource type.', ['group', 'resource']);
    const cut = this.metrics.registry.counter('apiserver_output_budget_closed_lists_total', 'Counter of list answers cut short because their client stopped reading while the server\'s output budget was exceeded, by resource type.', ['group', 'resource']);
    const budget = new OutputBudget(OUTPUT_BUDGET_BYTES, ({ holder, queued, total, reason }) => {
      (holder.kind === 'watch' ? terminated : cut).inc({ group: holder.group, resource: holder.resource });
      this.log.warn('closed a stream that stopped reading', { stream: holder.what, reason, queuedBytes: queued, serverQueuedBytes: total });
    });
    const r = this.metrics.registry;
    const queued = r.gauge('apiserver_output_queued_bytes', 'Bytes written to watch and list streams that their clients have not taken yet, counted in the server\'s output budget.');
    const limit = r.gauge('apiserver_output_budget_bytes', 'The server\'s output budget: the most bytes all streams together may hold for clients that do not read.');
    const streams = r.gauge('apiserver_output_backed_up_streams', 'Streams (watches and list answers) whose clients have bytes queued now.');
    // The process's memory beside it, as the reference's process collector and Node's client libraries name it.
    const rss = r.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.');
    const mem = r.gauge('nodejs_memory_bytes', 'process.memoryUsage(): the V8 heap used and total, external memory and ArrayBuffers (Buffers included).', ['kind']);
    r.collect(() => {
      queued.set({}, budget.total);
      limit.set({}, budget.limitBytes);
      streams.set({}, budget.backedUp());
      const m = process.memoryUsage();
      rss.set({}, m.rss);
      mem.set({ kind: 'heap_used' }, m.heapUsed);
      mem.set({ kind: 'heap_total' }, m.heapTotal);
      mem.set({ kind: 'external' }, m.external);
      mem.set({ kind: 'array_buffers' }, m.arrayBuffers);
    });
    return budget;
  }

  private async named<T>(kind: 'authenticator' | 'authorizer' | 'admission' | 'controller' | 'audit', refs: { plugin: string; options?: Record<string, unknown> }[], host: PluginHost, configDir: string) {
    const plugins = (await loadAll(kind, refs, host, { configDir })) as T[];
    return plugins.map((plugin, i) => ({ name: refs[i].plugin, plugin }));
  }

  /** Drops history older than the retention window. */
  private async compact(): Promise<void> {
    const retention = Number((this.config.storage.options as { retentionSeconds?: number } | undefined)?.retentionSeconds ?? 300) * 1000;
    const t = Date.now();
    this.cache.trim(t - retention);
    this.revSamples.push({ at: t, rev: this.backend.currentRevision() });
    let target = 0;
    while (this.revSamples.length && this.revSamples[0].at <= t - retention) target = this.revSamples.shift()!.rev;
    if (target > this.backend.compactedRevision()) {
      try { await this.backend.compact(target); } catch (e) { this.log.warn('compaction failed', { error: String(e) }); }
    }
  }

  // ------------------------------------------------------------------ the request pipeline

  async handle(req: KRequest, res: KResponse): Promise<void> {
    this.inFlight++;
    const started = performance.now();
    const info = requestInfo(req.method, req.path, req.query);
    // The wrapper notes the status code for the metrics; with audit backends it also feeds the
    // request's audit context (and adds the Audit-Id header).
    let tap: ResponseTap;
    let audit: AuditContext | undefined;
    if (this.auditor) {
      const a = this.auditor.begin(req, info, res);
      tap = a;
      audit = a.audit;
    } else {
      tap = new ResponseTap(res);
    }
    const run: RunState = { timedOut: false };
    try {
      const limitMs = this.requestDeadlineMs(info, req.query);
      const work = this.serve(req, tap, info, audit, run);
      if (limitMs === undefined) await work;
      else if ((await settleWithin(work, limitMs)) === 'timeout') this.timedOut(req, tap, run, work);
    } catch (e) {
      audit?.failed(e);
      this.sendError(tap, e, req.header('accept'));
    } finally {
      this.inFlight--;
      this.metrics.request(req, info, tap.code, started);
      if (this.log.verbosity >= 3) this.logRequest(req, run.user, tap.code, started);
      // A watch's last event goes out when its stream ends (AuditResponse.end).
      if (audit && (!tap.streaming || run.timedOut)) audit.complete(tap.code);
    }
  }

  /**
   * The request after its deadline was set: authenticate, impersonate, flow control, authorize,
   * route. The flow-control seat is given back whatever ends the request: its answer, an error, the
   * client going away, or the deadline (then the work goes on unseen, as the reference's does).
   */
  private async serve(req: KRequest, tap: ResponseTap, info: RequestInfo, audit: AuditContext | undefined, run: RunState): Promise<void> {
    const caller = await this.authenticate(req);
    audit?.authenticated(caller);
    const user = (run.user = await this.impersonate(req, caller));
    if (audit && user !== caller) audit.impersonated(user);
    // Flow control sits where the reference has it: after impersonation, before authorization.
    const flow = this.flowControl ? await this.flowControl.admit(this.flowRequest(info, user, req, tap)) : undefined;
    if (run.timedOut) { if (flow?.run) flow.release(); return; }
    if (flow?.headers) tap.extraHeaders = flow.headers;
    if (flow && !flow.run) return this.tooManyRequests(tap, flow.retryAfterSeconds);
    if (flow) {
      run.release = () => flow.release();
      tap.onClose(run.release);
    }
    try {
      await this.authorize(user, info, audit);
      await this.route(req, tap, info, user, audit, () => flow?.release());
    } finally {
      // a watch gives its seat back once it is established, as in the reference
      flow?.release();
    }
  }

  /**
   * The deadline of a request that is not long-running: --request-timeout, or the client's shorter
   * `?timeout=` (0 or a longer one leaves the server's), as the reference's request-deadline filter.
   */
  private requestDeadlineMs(info: RequestInfo, q: URLSearchParams): number | undefined {
    if (info.verb === 'watch' || info.verb === 'proxy' || LONG_RUNNING_SUBRESOURCES.has(info.subresource)) return undefined;
    const max = this.config.requestTimeoutSeconds * 1000;
    const ms = queryTimeoutMs(q);
    return ms !== undefined && ms > 0 && ms < max ? ms : max;
  }

  /**
   * The deadline passed: the reference's 504 (its timeout writer's body, without the handler's
   * headers), or, when the answer had already begun, the connection dropped. The seat goes back now;
   * whatever the work still writes goes nowhere, and how it ends is only logged.
   */
  private timedOut(req: KRequest, tap: ResponseTap, run: RunState, work: Promise<void>): void {
    run.timedOut = true;
    run.release?.();
    if (tap.code === 0) {
      tap.extraHeaders = undefined;
      tap.warning = undefined;
      tap.send(504, { 'content-type': 'text/plain; charset=utf-8' }, REQUEST_TIMEOUT_BODY);
    } else {
      tap.close();
    }
    tap.seal();
    work.then(
      () => this.log.v(2, 'post-timeout activity', { verb: req.method, URI: req.path, result: 'completed' }),
      (e) => this.log.v(2, 'post-timeout activity', { verb: req.method, URI: req.path, result: String((e as Error)?.message ?? e).slice(0, 512) }),
    );
  }

  /** The reference's -v=3 request line. */
  private logRequest(req: KRequest, user: UserInfo | undefined, code: number, started: number): void {
    const qs = req.query.toString();
    this.log.v(3, 'HTTP', {
      verb: req.method, URI: qs ? `${req.path}?${qs}` : req.path, user: user?.username ?? '', latency: `${(performance.now() - started).toFixed(3)}ms`,
      userAgent: req.header('user-agent') ?? '', srcIP: req.remoteAddress, resp: code,
    });
  }

  /** What flow control sees of a request; lists carry the number of objects they may read, for their seats. */
  private flowRequest(info: RequestInfo, user: UserInfo, req: KRequest, res: KResponse): FlowRequest {
    const fr: FlowRequest = { info, user, longRunning: info.verb === 'proxy' || LONG_RUNNING_SUBRESOURCES.has(info.subresource), aborted: () => res.aborted };
    if (info.verb === 'list') {
      const type = this.types.lookup(info.apiGroup, info.apiVersion, info.resource);
      if (type) fr.listSize = this.cache.forType(type).byKey.size;
      fr.limit = Number(req.query.get('limit')) || 0;
    }
    return fr;
  }

  /** The reference answers a request flow control turns away with plain text, not a Status. */
  private tooManyRequests(res: KResponse, retryAfterSeconds: number): void {
    res.send(429, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'retry-after': String(retryAfterSeconds) }, 'Too many requests, please try again later.\n');
  }

  /** An error as a Status: in Protobuf when the request's Accept prefers it (as the reference encodes errors), else JSON. */
  sendError(res: KResponse, e: unknown, accept?: string) {
    let se: StatusError;
    if (isStatusError(e)) se = e;
    else {
      // Messages can carry what the client sent: bounded, and JSON-escaped by the logger, never raw.
      this.log.error('internal error', { error: ((e as Error)?.stack ?? String(e)).slice(0, 4096) });
      se = errors.internal((e as Error)?.message ?? String(e));
    }
    if (se.plainText !== undefined) return res.send(se.code, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', ...se.headers }, se.plainText);
    let rep = 'json';
    try { rep = negotiate(accept, this.brand, false, true).rep; } catch { /* nothing acceptable: JSON */ }
    if (rep === 'protobuf') return res.send(se.code, { ...se.headers, 'content-type': this.brand.protobufType }, statusProtobuf(se.toStatus()));
    res.send(se.code, { 'content-type': 'application/json', ...se.headers }, JSON.stringify(se.toStatus()));
  }

  /** Authenticators in order; the first user wins; a refused credential is 401, never anonymous. */
  private async authenticate(req: AuthRequest): Promise<UserInfo> {
    let rejected: string | undefined;
    for (const a of this.authenticators) {
      let r;
      try { r = await a.plugin.authenticate(req); } catch (e) { r = { rejected: (e as Error).message }; }
      if (!r) continue;
      if ('rejected' in r) { rejected ??= r.rejected; continue; }
      const u = r.user;
      if (rejected !== undefined && u.username === 'system:anonymous') break;
      // Every authenticated user is in system:authenticated; the anonymous user is not.
      if (u.username !== 'system:anonymous' && !u.groups.includes('system:authenticated')) u.groups = [...u.groups, 'system:authenticated'];
      return u;
    }
    throw errors.unauthorized();
  }

  /** The authorizer chain's decision: the first allow or deny decides; no opinion from all is a deny. */
  async decide(attrs: AuthorizationAttributes): Promise<AuthorizationDecision> {
    const reasons: string[] = [];
    for (const a of this.authorizers) {
      let d;
      try { d = await a.plugin.authorize(attrs); } catch (e) {
        // A failing authorizer has no opinion; the next one (or the default deny) decides.
        this.log.warn('authorizer failed', { authorizer: a.name, error: String(e) });
        continue;
      }
      if (d.decision !== 'no-opinion') return d;
      if (d.reason) reasons.push(d.reason);
    }
    // As the reference does, the reasons of every authorizer that had no opinion explain the deny.
    return { decision: 'no-opinion', reason: reasons.length ? reasons.join(', ') : undefined };
  }

  private async authorize(user: UserInfo, info: RequestInfo, audit?: AuditContext): Promise<void> {
    const d = await this.decide({ ...info, user });
    audit?.authorized(d);
    if (d.decision !== 'allow') throw this.forbidden(user, info, d.reason);
  }

  /**
   * Impersonate-User / -Group / -Uid / -Extra-<key>: each requested attribute must be allowed to the
   * caller with verb "impersonate" (users, groups, serviceaccounts, uids, userextras/<key> in the
   * authentication group); then the request runs as the impersonated user.
   */
  private async impersonate(req: KRequest, caller: UserInfo): Promise<UserInfo> {
    const name = req.header('impersonate-user');
    const groups = req.headerValues('impersonate-group');
    const uid = req.header('impersonate-uid');
    const extra: Record<string, string[]> = {};
    for (const h of req.headerNames()) {
      if (!h.startsWith('impersonate-extra-')) continue;
      let key = h.slice('impersonate-extra-'.length);
      try { key = decodeURIComponent(key); } catch { throw errors.badRequest(`invalid Impersonate-Extra header: ${h}`); }
      extra[key.toLowerCase()] = req.headerValues(h);
    }
    if (name === undefined) {
      if (groups.length || uid !== undefined || Object.keys(extra).length) throw errors.badRequest('requested impersonation of groups, extra or uid without impersonating a user');
      return caller;
    }
    const authGroup = `authentication.${this.brand.domain}`;
    const check = async (resource: string, resourceName: string, group = '', namespace = '', subresource = '') => {
      const attrs: AuthorizationAttributes = { user: caller, isResourceRequest: true, path: '', verb: 'impersonate', apiPrefix: 'api', apiGroup: group, apiVersion: '', namespace, resource, subresource, name: resourceName };
      const d = await this.decide(attrs);
      if (d.decision !== 'allow') {
        const what = subresource ? `${resource}/${subresource}` : resource;
        throw new StatusError(403, 'Forbidden', `${group ? `${resource}.${group}` : resource} "${resourceName}" is forbidden: User "${caller.username}" cannot impersonate resource "${what}" in API group "${group}"${namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope'}`, { name: resourceName, group: group || undefined, kind: resource });
      }
    };
    const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(name);
    if (sa) await check('serviceaccounts', sa[2], '', sa[1]);
    else await check('users', name);
    for (const g of groups) await check('groups', g);
    if (uid !== undefined) await check('uids', uid, authGroup);
    for (const [k, vs] of Object.entries(extra)) for (const v of vs) await check('userextras', v, authGroup, '', k);
    const user: UserInfo = { username: name, groups: [...groups], extra };
    if (uid !== undefined) user.uid = uid;
    if (sa) user.groups.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
    if (name !== 'system:anonymous' && !user.groups.includes('system:authenticated')) user.groups.push('system:authenticated');
    if (name === 'system:anonymous' && !user.groups.includes('system:unauthenticated')) user.groups.push('system:unauthenticated');
    return user;
  }

  /** TokenReview: the token through the configured authenticators, as a request carrying it would go. */
  private async authenticateToken(token: string): Promise<UserInfo | undefined> {
    const req: AuthRequest = {
      method: 'GET', path: '/', remoteAddress: '',
      header: (n) => (n.toLowerCase() === 'authorization' ? `Bearer ${token}` : undefined),
      headerValues: (n) => (n.toLowerCase() === 'authorization' ? [`Bearer ${token}`] : []),
      headerNames: () => ['authorization'],
    };
    try {
      const u = await this.authenticate(req);
      return u.username === 'system:anonymous' ? undefined : u;
    } catch {
      return undefined;
    }
  }

  private forbidden(user: UserInfo, info: RequestInfo, reason: string | undefined): StatusError {
    if (!info.isResourceRequest) {
      return new StatusError(403, 'Forbidden', `forbidden: User "${user.username}" cannot ${info.verb} path "${info.path}"${reason ? `: ${reason}` : ''}`, {});
    }
    return errors.forbiddenRequest(user.username, info.verb, info.apiGroup, info.resource, info.subresource, info.namespace, info.name, reason);
  }

  private json(res: KResponse, body: unknown) {
    res.send(200, { 'content-type': 'application/json' }, JSON.stringify(body));
  }

  private async route(req: KRequest, res: KResponse, info: RequestInfo, user: UserInfo, audit?: AuditContext, delegated: () => void = () => {}): Promise<void> {
    const p = req.path;
    const m = req.method;
    if (this.remotes.size && info.apiPrefix === 'apis') {
      const parts = p.split('/', 4);
      const r = parts.length >= 4 && parts[3] !== '' ? this.remotes.get(`${parts[2]}/${parts[3]}`) : undefined;
      if (r) return this.proxyRemote(req, res, r.remote, user, delegated);
    }
    if (!info.isResourceRequest) {
      if (m !== 'GET' && m !== 'HEAD') {
        if (p === '/api' || p.startsWith('/api/') || p === '/apis' || p.startsWith('/apis/') || ['/healthz', '/livez', '/readyz', '/version'].includes(p)) throw errors.methodNotAllowed();
        throw errors.pathNotFound();
      }
      const h = this.health.handle(p, req.query);
      if (h) return res.send(h.code, h.headers, m === 'HEAD' ? '' : h.body);
      if (p === '/openapi/v2' || p === '/openapi/v3' || p.startsWith('/openapi/v3/')) {
        this.openapi ??= new OpenAPIService(() => this.types.all, this.brand, this.version(), () => this.remoteOpenAPI());
        const o = this.openapi.serveOpenAPI(p, (n) => req.header(n), req.query)!;
        return res.send(o.code, o.headers, m === 'HEAD' ? '' : o.body);
      }
      if (p === '/version' || p === '/version/') return this.json(res, this.version());
      if (p === '/metrics') return res.send(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }, m === 'HEAD' ? '' : this.metrics.registry.render());
      const served = this.paths.get(p);
      if (served) {
        const out = served();
        return res.send(200, { 'content-type': out.contentType }, m === 'HEAD' ? '' : out.body);
      }
      const remotes = [...this.remotes.values()].map((r) => r.remote);
      const root = p === '/api' || p === '/api/' ? 'api' : p === '/apis' || p === '/apis/' ? 'apis' : undefined;
      if (root) {
        const v = aggregatedAccept(req.header('accept'));
        if (v) return this.aggregatedDiscovery(req, res, aggregatedDiscovery(this.types, remotes, root === 'api', v), v);
        const body = root === 'api' ? apiVersions(`${this.config.bindAddress}:${this.port}`) : withRemoteGroups(apiGroupList(this.types), remotes);
        return res.send(200, { 'content-type': 'application/json', vary: 'Accept' }, JSON.stringify(body));
      }
      if (info.apiPrefix === 'api' && info.apiVersion) {
        const l = apiResourceList(this.types, '', info.apiVersion);
        if (l) return this.json(res, l);
      }
      if (info.apiPrefix === 'apis') {
        const parts = p.split('/').filter(Boolean);
        if (parts.length === 2) {
          const local = apiGroup(this.types, parts[1]);
          const g = remotes.some((r) => r.group === parts[1]) ? { ...withRemoteGroups({ groups: local ? [local] : [] }, remotes, parts[1]).groups[0], kind: 'APIGroup', apiVersion: 'v1' } : local;
          if (g) return this.json(res, g);
        }
        if (parts.length === 3) { const l = apiResourceList(this.types, parts[1], parts[2]); if (l) return this.json(res, l); }
      }
      throw this.notFound(info);
    }
    if (info.apiPrefix === 'api' && info.apiGroup !== '') throw errors.pathNotFound();
    const type = this.types.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!type) throw this.notFound(info);
    const inNamespacePath = /^\/apis?\/(?:[^/]+\/)?[^/]+\/namespaces\/[^/]+\/[^/]+/.test(p) && type.namespaced;
    // A list or watch carries the name of a metadata.name selector in its attributes (for the
    // authorizer); only a name in the path makes a cluster-wide path of a namespaced type wrong.
    const byName = info.verb !== 'list' && info.verb !== 'watch' && info.verb !== 'deletecollection';
    const pathName = !byName && (m === 'GET' || m === 'HEAD') ? '' : info.name;
    if (type.namespaced && pathName && !inNamespacePath) throw errors.pathNotFound();
    if (!type.namespaced && info.namespace && info.resource !== 'namespaces') throw errors.pathNotFound();
    const sub = info.subresource;
    if (sub && !(type.subresources ?? []).includes(sub)) throw errors.pathNotFound();
    const connect = sub && type.connectSubresources?.includes(sub) ? this.connectHandlers.get(`${type.group}/${type.version}/${type.resource}/${sub}`) : undefined;
    // what follows the sub-resource in the path: only a proxy sub-resource takes one
    const depth = (info.apiPrefix === 'api' ? 2 : 3) + (inNamespacePath ? 2 : 0) + 3;
    const segs = p.split('/');
    const tail = segs.length > depth + 1 ? `/${segs.slice(depth + 1).join('/')}` : '';
    if (tail && !connect?.route.path) throw errors.pathNotFound();
    if (type.deprecated) {
      this.metrics.deprecatedRequest(type, sub);
      audit?.deprecated(type);
    }
    if (type.deprecationWarning && res instanceof ResponseTap) res.warning = warningValue(type.deprecationWarning);
    const t: Target = { type, namespace: type.namespaced ? info.namespace : '', name: pathName, subresource: sub, audit };
    const r = this.registry;
    const stream = sub ? this.streamHandlers.get(`${type.group}/${type.version}/${type.resource}/${sub}`) : undefined;
    if (stream) {
      if (m !== 'GET') throw errors.methodNotAllowed();
      if (!this.registry.current(type, t.namespace, t.name)) throw errors.notFound(type.group, type.resource, t.name);
      return proxyStream(res, 'GET', await stream({ namespace: t.namespace, name: t.name, query: req.query, user }));
    }
    const virtual = type.virtual && !sub ? type.virtual : this.virtualHandlers.get(`${type.group}/${type.version}/${type.resource}/${sub}`);
    if (virtual || type.virtual) {
      if (m !== 'POST' || !virtual || (type.virtual && t.name)) throw errors.methodNotAllowed();
      return this.runVirtual(req, res, t, user, virtual);
    }
    if (type.computed) {
      if ((m !== 'GET' && m !== 'HEAD') || sub || info.verb === 'watch') throw errors.methodNotAllowed();
      return r.computed(req, res, t);
    }
    if (sub && type.connectSubresources?.includes(sub)) {
      const stored = connect?.route.objectName ? connect.route.objectName(t.name) : t.name;
      const options = { upgradeRequired: connect?.route.upgradeRequired, proxyPath: connect?.route.path ? tail : undefined };
      return this.registry.connect(req, res, t, user, stored, connect && (() => connect.handler({ method: m, namespace: t.namespace, name: t.name, subresource: sub, path: tail, query: req.query, user })), options);
    }
    if (sub === 'finalize' && m !== 'PUT') throw errors.methodNotAllowed();
    if (sub && m !== 'GET' && m !== 'HEAD' && m !== 'PUT' && m !== 'PATCH') throw errors.methodNotAllowed();
    switch (m) {
      case 'GET': case 'HEAD':
        if (info.verb === 'get') return r.get(req, res, t);
        if (info.verb === 'watch') return r.watch(req, res, t);
        return r.list(req, res, t);
      case 'POST':
        if (t.name) throw errors.methodNotAllowed();
        return r.create(req, res, t, user);
      case 'PUT':
        if (!t.name) throw errors.methodNotAllowed();
        return r.update(req, res, t, user);
      case 'PATCH':
        if (!t.name) throw errors.methodNotAllowed();
        return r.patch(req, res, t, user);
      case 'DELETE':
        return t.name ? r.delete(req, res, t, user) : r.deleteCollection(req, res, t, user);
      default:
        throw errors.methodNotAllowed();
    }
  }

  /** An APIGroupDiscoveryList, with the reference's Vary and ETag (a matching If-None-Match is a 304). */
  private aggregatedDiscovery(req: KRequest, res: KResponse, doc: unknown, v: string): void {
    const body = JSON.stringify(doc);
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32).toUpperCase()}"`;
    const headers = { 'content-type': `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`, vary: 'Accept', etag };
    if (req.header('if-none-match') === etag) return res.send(304, { vary: 'Accept', etag });
    res.send(200, headers, req.method === 'HEAD' ? '' : body);
  }

  /**
   * The reference's two 404s: a Status (with empty details) under a served group-version, whose web
   * service claims the path; Go's plain "404 page not found" anywhere else.
   */
  private notFound(info: RequestInfo): StatusError {
    const served = (info.apiPrefix === 'api' || info.apiPrefix === 'apis') && info.apiVersion !== '' &&
      this.types.all.some((t) => t.group === info.apiGroup && t.version === info.apiVersion);
    return served ? errors.pathNotFound() : errors.pageNotFound();
  }

  private async runVirtual(req: KRequest, res: KResponse, t: Target, user: UserInfo, handler: VirtualHandler) {
    // No Table for these kinds (the reference has no table convertor for them): such an Accept is a 406.
    const acc = negotiate(req.header('accept'), this.brand, false, !!t.type.protobuf);
    const dryRun = checkWriteOptions(req.query, this.brand, 'CreateOptions');
    if (t.subresource && !this.registry.current(t.type, t.namespace, t.name)) throw errors.notFound(t.type.group, t.type.resource, t.name);
    const raw = await req.body(this.config.maxRequestBodyBytes);
    const body = await this.registry.decode(req, t, raw);
    // A review's fields are checked as any typed write's: unknown ones are warnings (Strict: a 400), and are not kept.
    const warnings = t.subresource ? {} : this.registry.fieldValidation(req, t, body, isProtobufType(this.brand, req.header('content-type')) ? undefined : raw);
    dropNullFields(body, undefined);
    if (t.subresource) await this.registry.admitSubresourceCreate(t, user, dryRun, body);
    const out = await handler({ body, user, namespace: t.namespace, name: t.name, dryRun });
    const pb = acc.rep === 'protobuf' ? objectProtobuf(this.brand, t.type, out.object) : undefined;
    if (pb) return res.send(out.code ?? 201, { 'content-type': acc.contentType, ...warnings }, pb);
    res.send(out.code ?? 201, { 'content-type': acc.rep === 'protobuf' ? 'application/json' : acc.contentType, ...warnings }, await encodeAs(acc, JSON.stringify(out.object)));
  }

  version() {
    const v = this.config.emulatedVersion;
    return {
      major: v.major, minor: v.minor, gitVersion: v.gitVersion, gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean',
      buildDate: '2026-11-22T00:00:00Z', goVersion: `node${process.versions.node}`, compiler: 'tsc', platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
    };
  }

  // ------------------------------------------------------------------ plugin object access

  private objectClient(): ObjectClient {
    const target = (type: TypeDef, namespace: string, name: string, subresource = ''): Target => ({ type, namespace: type.namespaced ? namespace : '', name, subresource });
    const parse = (b: Buffer | string) => JSON.parse(typeof b === 'string' ? b : b.toString('utf8')) as KObject;
    return {
      get: async (type, namespace, name) => {
        const e = this.registry.current(type, namespace, name);
        return e ? parse(e.bytes) : undefined;
      },
      list: async (type, namespace) => [...this.registry.rc(type).range(namespace ?? '')].map((e: Entry) => parse(e.bytes)),
      scan: (type, visit) => {
        // One search for all the texts, over the bytes read as latin1: each UTF-8 byte one character,
        // so a text matches exactly where its UTF-8 bytes occur (a million objects at a start-up: a
        // regular expression over the string took a third of the time of one Buffer search per text).
        const patterns = new Map<string, RegExp>();
        const pattern = (texts: string[]) => {
          const k = texts.join('\0');
          let re = patterns.get(k);
          if (!re) patterns.set(k, (re = new RegExp(texts.map((t) => Buffer.from(t).toString('latin1').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'))));
          return re;
        };
        for (const e of this.registry.rc(type).range('')) {
          visit({ namespace: e.namespace, name: e.name, mentions: (...texts) => texts.length > 0 && pattern(texts).test(e.bytes.toString('latin1')), object: () => parse(e.bytes) });
        }
      },
      create: async (type, obj) => parse(await this.registry.createObject(target(type, obj.metadata?.namespace ?? '', obj.metadata?.name ?? ''), obj, SYSTEM_USER, false)),
      update: async (type, obj, subresource = '') => {
        const t = target(type, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '', subresource);
        const { bytes } = await this.registry.updateObject(t, SYSTEM_USER, false, () => JSON.parse(JSON.stringify(obj)), obj.metadata?.resourceVersion);
        return parse(bytes);
      },
      delete: async (type, namespace, name, opts = {}) => {
        try {
          const r = await this.registry.deleteObject(target(type, namespace, name), SYSTEM_USER, opts);
          return r.obj;
        } catch (e) {
          if (isStatusError(e) && e.code === 404) return undefined;
          throw e;
        }
      },
      watch: (type, listener) => {
        const k = resourcePrefix(type);
        let set = this.internalWatchers.get(k);
        if (!set) this.internalWatchers.set(k, (set = new Set()));
        set.add(listener);
        return () => set!.delete(listener);
      },
    };
  }

  // ------------------------------------------------------------------ shutdown

  /** Graceful stop: report not-ready for the shutdown delay, stop accepting, drain, close storage. */
  async stop(): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    if (this.config.shutdownDelaySeconds > 0) await new Promise((r) => setTimeout(r, this.config.shutdownDelaySeconds * 1000));
    for (const l of this.listeners) l.close();
    for (const end of [...this.watches]) end();
    const deadline = Date.now() + 60_000;
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (this.compactTimer) clearInterval(this.compactTimer);
    await this.elector?.stop();
    for (const c of this.controllers) await c.plugin.stop();
    for (const p of this.typeProviders) await p.stop?.();
    for (const p of [...this.authenticators, ...this.authorizers, ...this.admission.plugins]) await p.plugin.close?.();
    await this.auditor?.close();
    await this.flowControl?.close?.();
    await this.backend?.close();
    this.dataLock?.release();
    this.log.info('stopped');
  }
}
