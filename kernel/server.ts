// The server: loads the plugins the configuration names, warms the object cache from storage, wires
// the parts (the plugin host, the request pipeline, the API's endpoints) and listens; stops gracefully.
// The request pipeline's order is in pipeline/pipeline.ts.
import path from 'node:path';
import { getBrand, type Brand } from './contracts/brand.js';
import type { Config } from './ops/config.js';
import type { AdmissionPlugin, AuditBackend, StorageEvent, AuthorizationAttributes, AuthorizationDecision, Controller, FlowControl, Signer, PluginHost, StorageBackend, TypeProvider } from './contracts/index.js';
import { AdmissionChain, readAdmissionConfig } from './api/admission.js';
import { resolveFeatureGates } from './ops/features.js';
import { addServerChecks, Health } from './ops/health.js';
import type { KRequest, KResponse, Listener } from './http/types.js';
import { listenUws, uwsLoadError } from './http/uws.js';
import { listenNodeTls, listenUpgradeBackend, nodeSharesPort } from './http/node.js';
import { listenFront, PeerTable, privateSocketPath } from './http/front.js';
import { loadAll, loadPlugin, preloadPlugins } from './ops/loader.js';
import { Host } from './host/host.js';
import { clientCAs, ensureFrontProxyClient, ensurePki, servingHosts, writeAdminKubeconfigs } from './ops/pki.js';
import { Registry } from './api/registry/registry.js';
import { ApiDocuments } from './api/endpoints/documents.js';
import { objectClient, ObjectWatchers } from './api/endpoints/objects.js';
import { connectPathPattern, ResourceEndpoints } from './api/endpoints/resources.js';
import { ObjectCache } from './store/cache.js';
import { settleAfterWrites, upkeepMemory } from './ops/settle.js';
import { connectionLimit } from './ops/connections.js';
import { historyBounds, startCompaction } from './ops/compaction.js';
import { TypeRegistry } from './api/catalog.js';
import { WatchHub } from './watch/fanout.js';
import type { NamedController } from './ops/leader.js';
import { ControllerRunner } from './ops/controllers.js';
import { prepareDataDir, type DataDirLock } from './ops/datadir.js';
import { makeLogger, startupSteps, type ServerLogger } from './ops/logging.js';
import { loadEncryptionConfig } from './ops/encryption.js';
import { configuredPlugins, urlHost } from './ops/config.js';
import { StoreDamageError } from './store/integrity.js';
import { Auditor } from './ops/audit.js';
import { meteredOutputBudget, ServerMetrics } from './ops/metrics.js';
import { authenticateToken, type NamedAuthenticator } from './pipeline/authenticate.js';
import { decide, type NamedAuthorizer } from './pipeline/authorize.js';
import { RequestPipeline } from './pipeline/pipeline.js';
import { ReadLoops } from './replicas/loops.js';
import type { LoopRole } from './replicas/thread.js';

/** A watcher whose socket has this much queued is closed (it resumes from its last revision). 16 MiB holds a few thousand large events. */
const WATCH_BUDGET_BYTES = Number(process.env.CAPI_WATCH_BUDGET_BYTES ?? 16 * 1024 * 1024);
/** Bytes all watchers together may have queued on backed-up sockets (docs/operations.md, Limits). */
const OUTPUT_BUDGET_BYTES = Number(process.env.CAPI_OUTPUT_BUDGET_BYTES ?? 256 * 1024 * 1024);
/** Bookmarks about once a minute, as the reference sends them; tests shorten it. */
const BOOKMARK_INTERVAL_MS = Number(process.env.CAPI_BOOKMARK_INTERVAL_MS ?? 60_000);

export class Server {
  readonly brand: Brand;
  readonly log: ServerLogger;
  readonly cache = new ObjectCache();
  readonly hub = new WatchHub();
  readonly health: Health;
  backend!: StorageBackend;
  types!: TypeRegistry;
  registry!: Registry;
  /** Filled in place at start: the pipeline and the plugin host hold these very arrays. */
  private readonly authenticators: NamedAuthenticator[] = [];
  private readonly authorizers: NamedAuthorizer[] = [];
  private admission = new AdmissionChain([]);
  private runner: ControllerRunner | undefined;
  private get controllers(): NamedController[] { return this.runner?.running ?? []; }
  private typeProviders: TypeProvider[] = [];
  signers: Signer[] = [];
  private listeners: Listener[] = [];
  private stopCompaction: (() => void) | undefined;
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
  /** Plugins' watches of committed objects, fed by the cache. */
  private readonly objectWatchers = new ObjectWatchers();
  /** Discovery, OpenAPI, /version. */
  private readonly documents: ApiDocuments;
  /** Resource requests, with the sub-resources plugins serve. */
  private readonly resources: ResourceEndpoints;
  /** The PluginHost plugins get. */
  private readonly host: Host;
  /** Made once the plugins are loaded, just before the server listens. */
  private pipeline: RequestPipeline | undefined;
  private stopSettling: (() => void) | undefined;
  /** The front thread's heap settles with the main thread's. */
  private settleFront: ((compact: boolean) => void) | undefined;
  private frontProxy: { certPem: string; keyPem: string; caPem?: string } | undefined;
  /** The read loops this writer loop feeds (--read-loops). */
  private readLoops: ReadLoops | undefined;

  constructor(readonly config: Config, private readonly role?: LoopRole) {
    this.brand = getBrand(config.brand);
    this.log = makeLogger(config.loggingFormat, config.verbosity, config.log);
    this.featureGates = resolveFeatureGates(config.featureGates);
    this.health = new Health(config.livezGracePeriodSeconds);
    this.documents = new ApiDocuments({
      brand: this.brand, emulatedVersion: config.emulatedVersion, types: () => this.types,
      remotes: () => this.host.remoteList(), address: () => `${config.bindAddress}:${this.port}`,
    });
    this.resources = new ResourceEndpoints({
      brand: this.brand, maxRequestBodyBytes: config.maxRequestBodyBytes, types: () => this.types, registry: () => this.registry,
      notFound: (info) => this.documents.notFound(info), deprecated: (type, sub) => this.metrics.deprecatedRequest(type, sub),
    });
    this.host = new Host({
      brand: this.brand, config, log: this.log, loops: role?.loops ?? config.readLoops + 1, featureGates: this.featureGates, metrics: this.metrics.registry,
      cache: this.cache, hub: this.hub, objects: objectClient(() => this.registry, this.objectWatchers, (...a) => this.resources.createSubresource(...a)), resources: this.resources,
      types: () => this.types, registry: () => this.registry, backend: () => this.backend, signers: () => this.signers,
      decide: (attrs) => this.decide(attrs), authenticateToken: (token) => authenticateToken(this.authenticators, token),
      frontProxy: () => this.frontProxy, apiChanged: () => this.documents.changed(),
    });
  }

  /** The authorizer chain's decision (plugins ask through PluginHost.authorize). */
  async decide(attrs: AuthorizationAttributes): Promise<AuthorizationDecision> {
    return decide(this.authorizers, this.log, attrs);
  }

  async start(): Promise<void> {
    const cfg = this.config;
    const configDir = cfg.configFile ? path.dirname(path.resolve(cfg.configFile)) : process.cwd();
    const host = this.host.api();
    const step = startupSteps(this.log);
    step('modules loaded');
    if (!this.role) for (const w of cfg.warnings ?? []) this.log.warn(w);
    if (!this.role) this.dataLock = prepareDataDir(cfg.dataDir, { brand: this.brand.name, allowInsecure: cfg.insecureDataDirPermissions });
    const hosts = servingHosts(this.brand.name, cfg);
    // Every configured plugin's module starts loading now; each is still created in its turn below.
    preloadPlugins(configuredPlugins(cfg), configDir);
    // The credentials, the store and the type plugins do not depend on each other: they are made
    // ready at once, so the store's and the certificates' I/O overlap the loading of modules.
    const pkiReady = (async () => {
      const renewed = (msg: string, fields: Record<string, unknown>) => this.log.info(msg, fields);
      const pki = await ensurePki(cfg.dataDir, { hosts, brand: this.brand, log: renewed });
      return { pki, frontProxy: await ensureFrontProxyClient(cfg.dataDir, cfg.proxyClient, renewed) };
    })();
    const typesReady = loadAll('types', cfg.types, host, { configDir });
    const storeReady = (async () => {
      if (this.role) { await this.role.backend.open(); return this.role.backend; }
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
      if (!warming) {
        this.cache.apply(events, rev);
        this.readLoops?.commit(events, rev);
        return;
      }
      warming.events.push(...events);
      warming.rev = rev;
    });
    const snapshot = this.backend.currentRevision();
    for await (const kv of this.backend.all()) this.cache.load(kv.key, kv.value, kv.modRevision, kv.createRevision);
    this.cache.rev = snapshot;
    const history: StorageEvent[] = [];
    for await (const ev of this.backend.history(this.backend.compactedRevision())) if (ev.revision <= snapshot) history.push(ev);
    Object.assign(this.cache, historyBounds(cfg.storage.options));
    this.cache.preload(history, this.backend.compactedRevision());
    this.cache.onEvent = (ev, rc) => {
      this.hub.dispatch(ev, rc);
      this.objectWatchers.notify(ev, rc);
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
      watchBudgetBytes: WATCH_BUDGET_BYTES, outputBudget: meteredOutputBudget(this.metrics.registry, OUTPUT_BUDGET_BYTES, this.log), bookmarkIntervalMs: BOOKMARK_INTERVAL_MS, featureGates: this.featureGates,
    });
    this.authenticators.push(...(await this.named<NamedAuthenticator['plugin']>('authenticator', cfg.authentication, host, configDir)));
    this.authorizers.push(...(await this.named<NamedAuthorizer['plugin']>('authorizer', cfg.authorization, host, configDir)));
    // Options from --admission-control-config-file reach each named admission plugin.
    const admissionConf = cfg.admissionConfigFile ? await readAdmissionConfig(cfg.admissionConfigFile, this.brand) : {};
    const admissionRefs = cfg.admission.map((r) => (admissionConf[r.plugin] ? { ...r, options: { ...r.options, ...admissionConf[r.plugin] } } : r));
    this.admission.plugins.push(...(await this.named<AdmissionPlugin>('admission', admissionRefs, host, configDir)));
    this.flowControl = await loadPlugin('flowcontrol', cfg.flowControl, host, { configDir });
    let auditBackends = await this.named<AuditBackend>('audit', cfg.audit ?? [], host, configDir);
    // a read loop decides the level by the policy; the writer's backend writes the event (one file, one rotation)
    const role = this.role;
    if (role) auditBackends = auditBackends.map(({ name, plugin }, i) => ({ name, plugin: { level: (a) => plugin.level(a), record: (ev) => role.audit(i, ev) } }));
    if (auditBackends.length) this.auditor = new Auditor(auditBackends, this.brand, this.log, this.metrics);
    this.metrics.instrumentWatchHub(this.hub);
    this.metrics.instrumentHistory(this.cache);

    step('authentication, authorization, admission, flow control, audit plugins');
    // Signers are loaded (and so checked) now; the certificates API that calls them comes later.
    this.signers = (await loadAll('signer', cfg.signers, host, { configDir })) as Signer[];
    for (const p of providers) await p.start?.();
    // Controllers: everywhere, on the Lease holder, or stepping aside for an external component (ops/controllers.ts).
    const le = cfg.leaderElection;
    this.runner = new ControllerRunner({
      refs: cfg.controllers, load: (refs) => this.named<Controller>('controller', refs, host, configDir), readLoop: !!this.role,
      elect: !this.role && (le.enabled ?? !!this.backend.latestRevision), timings: le, stepAside: cfg.stepAside,
      objects: host.objects, types: this.types, brand: this.brand, log: this.log,
    });
    await this.runner.start();

    step('controllers started');
    addServerChecks(this.health, {
      storage: this.backend.health ?? { name: this.brand.storageCheck, live: true }, storageReady: () => this.backend.ready?.() !== false,
      cacheBehind: () => this.cache.rev < this.backend.currentRevision(),
      pluginHooks: [...this.authorizers.map((a) => a.plugin), this.flowControl, ...this.typeProviders, ...this.controllers.map((c) => c.plugin)].flatMap((p) => p?.postStartHooks ?? []),
      pluginChecks: this.controllers.flatMap((c) => c.plugin.healthChecks ?? []),
      plugins: [['authenticator', this.authenticators], ['authorizer', this.authorizers], ['admission', this.admission.plugins], ['controller', this.controllers]],
      shuttingDown: () => this.shuttingDown,
    });

    const tls = { certFile: cfg.tls.certFile ?? pki.certFile, keyFile: cfg.tls.keyFile ?? pki.keyFile };
    const pipeline = (this.pipeline = this.requestPipeline());
    const handler = (req: KRequest, res: KResponse) => pipeline.handle(req, res);
    const clientCAFiles = clientCAs(pki.caFile, cfg.authentication);
    const wantsCerts = cfg.authentication.some((r) => r.plugin === 'x509' || r.options?.clientCAFile !== undefined);
    this.certsOnSecurePort = cfg.securePortClientCerts ?? wantsCerts;
    const noUws = uwsLoadError();
    if (this.role) {
      // a read loop: the writer's TLS front gives this app its share of the connections, or the kernel does (a shared port)
      const sock = this.role.socketPath;
      const joined = { host: cfg.bindAddress, port: cfg.securePort, handler, sharedPort: 'join' } as const;
      this.listeners.push(await (noUws ? listenNodeTls({ ...joined, ...tls, clientCAFiles, maxConnections: connectionLimit(cfg.maxConnections, 1) })
        : listenUws(sock ? { host: '', port: 0, behindFront: { path: sock, peers: this.role.peers }, handler } : { ...joined, tls })));
      this.port = cfg.securePort;
    } else if (noUws) {
      // No uWebSockets.js binary for this Node.js or libc: Node's own TLS and HTTP serve the port,
      // client certificates included. Slower (docs/benchmarks.md, "Transports"), never a refusal.
      this.log.warn('uWebSockets.js does not load here: serving on Node\'s own TLS/HTTP stack, which answered about 60 % of the GETs per second of the uWebSockets.js transport, measured side by side on one machine (docs/benchmarks.md, "Transports by Node.js version")', { node: process.version, reason: noUws });
      // read loops listen on this port too (SO_REUSEPORT, Node 22.12 and later): the kernel spreads the connections
      if (cfg.readLoops > 0 && !nodeSharesPort) { this.log.warn('--read-loops needs uWebSockets.js or Node.js 22.12 or later: serving on one loop', { readLoops: cfg.readLoops }); cfg.readLoops = 0; }
      const l = await listenNodeTls({ host: cfg.bindAddress, port: cfg.securePort, ...tls, clientCAFiles, handler, maxConnections: connectionLimit(cfg.maxConnections, 1), sharedPort: cfg.readLoops > 0 ? 'open' : undefined });
      this.listeners.push(l);
      this.port = l.port;
      this.certsOnSecurePort = true;
      await this.startReadLoops();
    } else if (this.certsOnSecurePort) {
      // The secure port takes client certificates: node:tls in front, uWS behind it (http/front.ts).
      const sock = privateSocketPath();
      const peers = new PeerTable();
      const back = await listenUws({ host: '', port: 0, behindFront: { path: sock.path, peers }, handler });
      // upgrades on CONNECT paths (exec, attach, portforward, proxy) go to a node:http backend that can pass them through
      const upgrades = await listenUpgradeBackend({ path: sock.upgradePath, peers, handler });
      // the backends close with the server even when the front cannot listen (a port in use)
      this.listeners.push({ port: 0, close: () => { back.close(); upgrades.close(); sock.cleanup(); } });
      const front = await listenFront({ host: cfg.bindAddress, port: cfg.securePort, ...tls, clientCAFiles, peers, maxConnections: connectionLimit(cfg.maxConnections, 3), route: (m) => this.readLoops?.route(m) ?? Promise.resolve() }, sock.path, { path: sock.upgradePath, route: connectPathPattern(this.types) });
      this.listeners.push({ port: front.port, close: () => front.close() });
      this.settleFront = front.settle;
      this.port = front.port;
      for (const p of await this.startReadLoops(path.dirname(sock.path))) front.addBackend(p);
    } else {
      // with read loops, each loop's app listens on this port too (SO_REUSEPORT): the kernel spreads the connections
      const l = await listenUws({ host: cfg.bindAddress, port: cfg.securePort, tls, handler, sharedPort: cfg.readLoops > 0 ? 'open' : undefined });
      this.listeners.push(l);
      this.port = l.port;
      await this.startReadLoops();
    }
    if (cfg.mtlsPort !== undefined) {
      // The optional separate node:tls listener (kernel/http/node.ts).
      const m = await listenNodeTls({ host: cfg.bindAddress, port: cfg.mtlsPort, ...tls, clientCAFiles, handler, maxConnections: connectionLimit(cfg.maxConnections, 1) });
      this.listeners.push(m);
      this.mtlsPort = m.port;
    }
    step('listening');
    if (this.role) {
      // the writer loop wrote the kubeconfigs and runs compaction; a loop trims its own history
      this.url = `https://${urlHost(cfg.bindAddress)}:${this.port}`;
      this.stopCompaction = startCompaction({ retentionSeconds: this.retentionSeconds(), cache: this.cache });
      this.stopSettling = settleAfterWrites(() => this.cache.rev, () => {});
      this.log.v(2, 'read loop serving', { loop: this.role.index, revision: this.cache.rev });
      return;
    }
    for (const c of this.controllers) await c.plugin.listening?.({ port: this.port });
    step('controllers told the port');
    this.kubeconfigPath = pki.kubeconfigPath;
    const hostForUrl = urlHost(cfg.bindAddress);
    this.url = `https://${hostForUrl}:${this.port}`;
    const certPort = this.certsOnSecurePort ? this.port : this.mtlsPort;
    // The same admin by client certificate, where a port takes them and the x509 authenticator checks them.
    const certServer = certPort && cfg.authentication.some((r) => r.plugin === 'x509') ? `https://${hostForUrl}:${certPort}` : undefined;
    await writeAdminKubeconfigs(cfg.dataDir, pki, this.url, certServer, (msg, fields) => this.log.info(msg, fields));
    step('kubeconfigs written');
    this.stopCompaction = startCompaction({
      retentionSeconds: this.retentionSeconds(), cache: this.cache, backend: this.backend,
      compacted: (e) => (e ? this.log.warn('compaction failed', { error: String(e) }) : this.readLoops?.publish()),
    });
    // Garbage of a burst of writes (or the start-up) and C memory freed by closed connections go back to the system (ops/settle.ts).
    this.stopSettling = upkeepMemory(() => this.cache.rev, this.log, this.settleFront);
    this.log.info('serving', { address: `https://${hostForUrl}:${this.port}`, ...(this.readLoops ? { readLoops: cfg.readLoops } : {}), ...(this.mtlsPort ? { mtls: `https://${hostForUrl}:${this.mtlsPort}` } : {}), brand: this.brand.name, dataDir: cfg.dataDir, revision: this.cache.rev });
  }

  /** Read loops (--read-loops) on the port just opened: behind the TLS front (its socket directory) or sharing the port. */
  private async startReadLoops(socketDir?: string): Promise<string[]> {
    if (!(this.config.readLoops > 0)) return [];
    this.readLoops = new ReadLoops(this.backend, () => this.cache.snapshot(), (i, ev) => this.auditor?.backends[i]?.plugin.record(ev),
      (loop, why) => {
        // as an error nothing caught ends the server on its one loop, so it does on any
        this.log.error('read loop failed: stopping the server', { loop, why });
        void this.stop().finally(() => process.exit(1));
      });
    return this.readLoops.start(this.config.readLoops, { ...this.config, securePort: this.port, readLoops: 0, shutdownDelaySeconds: 0 }, socketDir);
  }

  /** The request pipeline over the loaded plugins; non-resource paths are answered in this order. */
  private requestPipeline(): RequestPipeline {
    return new RequestPipeline({
      brand: this.brand, log: this.log, metrics: this.metrics, auditor: this.auditor, requestTimeoutSeconds: this.config.requestTimeoutSeconds,
      authenticators: this.authenticators, decide: (attrs) => decide(this.authorizers, this.log, attrs), flowControl: this.flowControl,
      listSize: (info) => {
        const type = this.types.lookup(info.apiGroup, info.apiVersion, info.resource);
        return type ? this.cache.forType(type).byKey.size : undefined;
      },
      remotes: this.host.remotes, maxRequestBodyBytes: this.config.maxRequestBodyBytes,
      paths: [
        (req, res) => this.health.answer(req, res),
        (req, res) => this.documents.answerOpenAPI(req, res),
        (req, res) => this.documents.answerVersion(req, res),
        (req, res) => this.metrics.answer(req, res),
        (req, res) => this.host.answerPath(req, res),
        (req, res, info) => this.documents.answerDiscovery(req, res, info),
      ],
      notFound: (info) => this.documents.notFound(info),
      resource: (req, res, info, user, audit) => this.resources.serve(req, res, info, user, audit),
    });
  }

  private async named<T>(kind: 'authenticator' | 'authorizer' | 'admission' | 'controller' | 'audit', refs: { plugin: string; options?: Record<string, unknown> }[], host: PluginHost, configDir: string) {
    return ((await loadAll(kind, refs, host, { configDir })) as T[]).map((plugin, i) => ({ name: refs[i].plugin, plugin }));
  }

  private retentionSeconds(): number {
    return Number((this.config.storage.options as { retentionSeconds?: number } | undefined)?.retentionSeconds ?? 300);
  }

  // ------------------------------------------------------------------ shutdown

  /** Graceful stop: report not-ready for the shutdown delay, stop accepting, drain, close storage. */
  async stop(): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    if (this.config.shutdownDelaySeconds > 0) await new Promise((r) => setTimeout(r, this.config.shutdownDelaySeconds * 1000));
    const closed = this.listeners.map((l) => l.close());
    await this.readLoops?.stop();
    for (const end of [...this.watches]) end();
    const deadline = Date.now() + 60_000;
    while ((this.pipeline?.inFlight ?? 0) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (this.role) for (const l of this.listeners) l.closeConnections?.();
    this.stopCompaction?.();
    this.stopSettling?.();
    await this.runner?.stop();
    for (const p of this.typeProviders) await p.stop?.();
    for (const p of [...this.authenticators, ...this.authorizers, ...this.admission.plugins]) await p.plugin.close?.();
    await this.auditor?.close();
    await this.flowControl?.close?.();
    await this.backend?.close();
    await Promise.all(closed);
    this.dataLock?.release();
    this.log.info('stopped');
  }
}
