// The shape of the server configuration, apart from config.ts (which loads it and applies the
// flags) so that the flags can name it without importing their importer.

export interface PluginRef {
  plugin: string;
  options?: Record<string, unknown>;
}

export interface Config {
  brand: string;
  dataDir: string;
  bindAddress: string;
  securePort: number;
  /** A second HTTPS listener on node:tls that hands verified client certificates to authenticators (unset: none). */
  mtlsPort?: number;
  /** Whether the secure port asks for client certificates (a node:tls front before uWS); default: when an authenticator takes them. */
  securePortClientCerts?: boolean;
  tls: { certFile?: string; keyFile?: string };
  maxRequestBodyBytes: number;
  storage: PluginRef;
  types: PluginRef[];
  authentication: PluginRef[];
  authorization: PluginRef[];
  admission: PluginRef[];
  controllers: PluginRef[];
  /**
   * Controllers run on one server at a time, the holder of a Lease (as the reference's controller
   * manager): `enabled` defaults to on when the storage is shared (etcd3) and off on the embedded store.
   */
  leaderElection: { enabled?: boolean; leaseDurationSeconds: number; renewDeadlineSeconds: number; retryPeriodSeconds: number };
  signers: PluginRef[];
  /** Audit backends (each with its own policy); --audit-log-path adds the built-in `log` backend. */
  audit: PluginRef[];
  /** Overload protection: `apf` (API Priority and Fairness, the default) or `max-inflight`. */
  flowControl: PluginRef;
  featureGates: Record<string, boolean>;
  runtimeConfig: Record<string, boolean>;
  /**
   * Controllers that do an external component's work (plugin `externalLease`: kube-controller-manager,
   * kube-scheduler) step aside while it runs: by that Lease name, `true` always, `false` never; a
   * name not listed is detected, by its leader Lease held and renewed in the system namespace.
   */
  stepAside: Record<string, boolean>;
  shutdownDelaySeconds: number;
  livezGracePeriodSeconds: number;
  /** --request-timeout: every request that is not long-running (watch, proxy, exec, ...) is answered 504 by then. */
  requestTimeoutSeconds: number;
  /**
   * --read-loops: threads that each serve a share of the connections with a replica of the store
   * (kernel/replicas/; docs/ARCHITECTURE.md "More than one core"). 0: the one event loop serves all.
   */
  readLoops: number;
  /** --max-connections: client connections a node:tls listener takes at once (ops/connections.ts). Unset: 10,000. */
  maxConnections?: number;
  emulatedVersion: { major: string; minor: string; gitVersion: string };
  /** --service-cluster-ip-range: the built-in types' cluster IP allocator and the serving certificate's service IP. */
  serviceClusterIPRange: string;
  /** --service-node-port-range. */
  serviceNodePortRange: string;
  /** --advertise-address: what the server's own Service's endpoints list (unset: derived from the bind address). */
  advertiseAddresses?: string[];
  /** Path given by --admission-control-config-file (or the file's admissionConfigFile). */
  admissionConfigFile?: string;
  /** EncryptionConfiguration file: which resources are encrypted at rest, and how (--encryption-provider-config). */
  encryptionProviderConfig?: string;
  /** The client certificate presented to extension API servers (--proxy-client-cert-file/--proxy-client-key-file); unset: one made at first start. */
  proxyClient?: { certFile?: string; keyFile?: string };
  /** Log lines as klog-style text or JSON (--logging-format). */
  loggingFormat: 'text' | 'json';
  /** Log verbosity (-v): 3 logs every request. */
  verbosity: number;
  /** Serve a data directory other users can read (--insecure-data-dir-permissions). */
  insecureDataDirPermissions?: boolean;
  /** Where the configuration was loaded from, for messages. */
  configFile?: string;
  /** What start-up logs as warnings: a configuration that works but is likely not what was meant. */
  warnings?: string[];
  /** --ephemeral: the data directory is a temporary one, removed at exit. */
  ephemeral?: boolean;
  /** --print-kubeconfig: stdout gets the kubeconfig's path alone, once serving. */
  printKubeconfig?: boolean;
  /** Where log lines go (an embedding's choice, kernel/ops/embed.ts); default standard error. */
  log?: (line: string) => void;
}

/** What a config file may hold: any subset of Config, nested objects partial too. */
export type FileConfig = Partial<Omit<Config, 'tls' | 'emulatedVersion' | 'configFile' | 'warnings' | 'log' | 'ephemeral' | 'printKubeconfig'>> & {
  tls?: Config['tls'];
  emulatedVersion?: Partial<Config['emulatedVersion']>;
  /** Admission plugins added to the default list (--enable-admission-plugins); an entry already on merges its options. */
  enableAdmissionPlugins?: PluginRef[];
  /** Admission plugins taken out of the default list (--disable-admission-plugins), by name. */
  disableAdmissionPlugins?: string[];
  /** The whole admission list, defaults dropped: run these and nothing else. (`admission` is its old spelling.) */
  replaceAdmissionPlugins?: PluginRef[];
  /** Controllers added to the list (the default one, or the file's `controllers`); an entry already on merges its options. */
  enableControllers?: PluginRef[];
  /** Controllers taken out of that list, by name. */
  disableControllers?: string[];
};
