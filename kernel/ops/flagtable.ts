// The command-line flags as data, in the reference server's spelling: each flag's key, kind and help,
// the authorization mode names, and the admission plugins' names, order and defaults. flags.ts parses
// argv against this table and applies the result onto the configuration.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brands } from '../contracts/brand.js';

/** Flag values after parsing; undefined = not given. */
export interface ParsedFlags {
  help?: boolean;
  config?: string;
  dataDir?: string;
  ephemeral?: boolean;
  printKubeconfig?: boolean;
  bindAddress?: string;
  securePort?: number;
  mtlsPort?: number;
  securePortClientCerts?: boolean;
  brand?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  maxRequestBytes?: number;
  /** Plugin names, already mapped from mode names. */
  authorizationMode?: string[];
  authorizationPolicyFile?: string;
  authorizationWebhookConfigFile?: string;
  authorizationWebhookAuthorizedTTLSeconds?: number;
  authorizationWebhookUnauthorizedTTLSeconds?: number;
  authorizationWebhookVersion?: string;
  tokenAuthFile?: string;
  clusterSigningCertFile?: string;
  clusterSigningKeyFile?: string;
  clusterSigningDurationSeconds?: number;
  anonymousAuth?: boolean;
  clientCAFile?: string;
  enableBootstrapTokenAuth?: boolean;
  serviceAccountKeyFiles?: string[];
  serviceAccountIssuers?: string[];
  serviceAccountLookup?: boolean;
  apiAudiences?: string[];
  oidcIssuerURL?: string;
  oidcClientID?: string;
  oidcUsernameClaim?: string;
  oidcUsernamePrefix?: string;
  oidcGroupsClaim?: string;
  oidcGroupsPrefix?: string;
  oidcRequiredClaims?: Record<string, string>;
  oidcCAFile?: string;
  oidcSigningAlgs?: string[];
  webhookConfigFile?: string;
  webhookCacheTTLSeconds?: number;
  webhookVersion?: string;
  requestheaderUsernameHeaders?: string[];
  requestheaderGroupHeaders?: string[];
  requestheaderExtraHeadersPrefixes?: string[];
  requestheaderClientCAFile?: string;
  requestheaderAllowedNames?: string[];
  enableAdmissionPlugins?: string[];
  disableAdmissionPlugins?: string[];
  admissionControlConfigFile?: string;
  defaultNotReadyTolerationSeconds?: number;
  defaultUnreachableTolerationSeconds?: number;
  runtimeConfig?: Record<string, boolean>;
  stepAside?: Record<string, boolean>;
  featureGates?: Record<string, boolean>;
  shutdownDelaySeconds?: number;
  livezGracePeriodSeconds?: number;
  storageRetentionSeconds?: number;
  eventTTLSeconds?: number;
  storageGroupCommit?: boolean;
  storageStartEmpty?: boolean;
  enablePriorityAndFairness?: boolean;
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  requestTimeoutSeconds?: number;
  readLoops?: number;
  maxConnections?: number;
  storageBackend?: string;
  etcdServers?: string[];
  etcdCAFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  etcdPrefix?: string;
  etcdCompactionIntervalSeconds?: number;
  leaderElect?: boolean;
  leaderElectLeaseDurationSeconds?: number;
  leaderElectRenewDeadlineSeconds?: number;
  leaderElectRetryPeriodSeconds?: number;
  auditLogPath?: string;
  auditPolicyFile?: string;
  auditLogMaxSize?: number;
  auditLogMaxBackup?: number;
  auditLogMaxAge?: number;
  insecureDataDirPermissions?: boolean;
  loggingFormat?: string;
  verbosity?: number;
  serviceClusterIPRange?: string;
  serviceNodePortRange?: string;
  advertiseAddresses?: string[];
  kubeletClientCertificate?: string;
  kubeletClientKey?: string;
  kubeletCertificateAuthority?: string;
  kubeletPreferredAddressTypes?: string[];
  encryptionProviderConfig?: string;
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
  enableAggregatorRouting?: boolean;
}

/**
 * list: comma-separated, repeatable (values accumulate); array: repeatable, one value per occurrence,
 * never split on commas; pair: repeatable `key=value`, one pair per occurrence (the value may hold commas).
 */
export type FlagKind = 'string' | 'bool' | 'port' | 'bytes' | 'int' | 'list' | 'array' | 'pair' | 'map' | 'gates' | 'duration';
export interface FlagDef {
  key: keyof ParsedFlags;
  kind: FlagKind;
  help: string;
}

export const FLAGS: Record<string, FlagDef> = {
  config: { key: 'config', kind: 'string', help: 'Configuration file (YAML or JSON).' },
  'data-dir': { key: 'dataDir', kind: 'string', help: 'Directory for stored data and first-start credentials (default ./data).' },
  ephemeral: { key: 'ephemeral', kind: 'bool', help: 'A throwaway server for tests: a new temporary data directory, removed at exit, and the memory store (nothing survives the process); a free port unless --secure-port; Kubernetes names unless --brand.' },
  'print-kubeconfig': { key: 'printKubeconfig', kind: 'bool', help: 'Once serving, print the admin kubeconfig\'s path on stdout, one line and nothing else (the welcome goes to stderr), for a harness that starts this server as a subprocess.' },
  'bind-address': { key: 'bindAddress', kind: 'string', help: 'Address to listen on (default 127.0.0.1).' },
  'secure-port': { key: 'securePort', kind: 'port', help: 'HTTPS port; 0 picks a free port (default 6443).' },
  'secure-port-client-certs': { key: 'securePortClientCerts', kind: 'bool', help: 'Ask for client certificates on the secure port (node:tls terminates TLS in front of uWebSockets.js); default true when x509 or a front-proxy CA is configured, false serves the port with uWebSockets.js TLS alone.' },
  'mtls-port': { key: 'mtlsPort', kind: 'port', help: 'Also serve HTTPS on this port through node:tls, where client certificates signed by the cluster CA, a --client-ca-file CA or the --requestheader-client-ca-file CA reach authenticators (unset: off; 0 picks a free port).' },
  brand: { key: 'brand', kind: 'string', help: `Naming of groups and system objects: ${Object.keys(brands).join(' | ')} (default cluster).` },
  'tls-cert-file': { key: 'tlsCertFile', kind: 'string', help: 'Serving certificate (PEM); default: generated at first start.' },
  'tls-private-key-file': { key: 'tlsPrivateKeyFile', kind: 'string', help: 'Private key of the serving certificate (PEM).' },
  'max-request-bytes': { key: 'maxRequestBytes', kind: 'bytes', help: 'Largest accepted request body in bytes (default 3145728).' },
  'authorization-mode': { key: 'authorizationMode', kind: 'list', help: 'Ordered authorizers: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC, Node.' },
  'authorization-policy-file': { key: 'authorizationPolicyFile', kind: 'string', help: 'ABAC policy file: one JSON Policy object a line (with --authorization-mode=ABAC).' },
  'authorization-webhook-config-file': { key: 'authorizationWebhookConfigFile', kind: 'string', help: 'Client configuration (kubeconfig format) of the remote service asked for decisions (with --authorization-mode=Webhook).' },
  'authorization-webhook-cache-authorized-ttl': { key: 'authorizationWebhookAuthorizedTTLSeconds', kind: 'duration', help: 'How long allowed answers of the authorization webhook are cached (default 5m).' },
  'authorization-webhook-cache-unauthorized-ttl': { key: 'authorizationWebhookUnauthorizedTTLSeconds', kind: 'duration', help: 'How long other answers of the authorization webhook are cached (default 30s).' },
  'authorization-webhook-version': { key: 'authorizationWebhookVersion', kind: 'string', help: 'SubjectAccessReview version sent to the authorization webhook: v1beta1 (default) or v1.' },
  'cluster-signing-cert-file': { key: 'clusterSigningCertFile', kind: 'string', help: 'CA certificate (PEM) the built-in certificate signers issue with (default: the server\'s CA).' },
  'cluster-signing-key-file': { key: 'clusterSigningKeyFile', kind: 'string', help: 'Private key (PEM) of --cluster-signing-cert-file.' },
  'cluster-signing-duration': { key: 'clusterSigningDurationSeconds', kind: 'duration', help: 'Lifetime of certificates the built-in signers issue (default 8760h), capped by a request\'s expirationSeconds.' },
  'token-auth-file': { key: 'tokenAuthFile', kind: 'string', help: 'Static token file (CSV: token,user,uid,"group1,group2").' },
  'anonymous-auth': { key: 'anonymousAuth', kind: 'bool', help: 'Treat requests without credentials as system:anonymous (default true).' },
  'client-ca-file': { key: 'clientCAFile', kind: 'string', help: 'Client certificates signed by a CA in this PEM bundle authenticate (common name = user, organizations = groups); presented on the secure port (and --mtls-port).' },
  'enable-bootstrap-token-auth': { key: 'enableBootstrapTokenAuth', kind: 'bool', help: 'Accept bootstrap tokens (<id>.<secret>) backed by bootstrap-token-<id> secrets in the system namespace.' },
  'service-account-key-file': { key: 'serviceAccountKeyFiles', kind: 'array', help: 'PEM public or private key (RSA or ECDSA) verifying service account tokens; repeatable (default: the serving key).' },
  'service-account-issuer': { key: 'serviceAccountIssuers', kind: 'array', help: 'Issuer of service account tokens; repeatable: the first signs, all are accepted (default https://<brand>.default.svc.cluster.local).' },
  'service-account-lookup': { key: 'serviceAccountLookup', kind: 'bool', help: 'Check that the service account (and any bound pod or secret) of a token still exists (default true).' },
  'api-audiences': { key: 'apiAudiences', kind: 'list', help: 'Audiences service account tokens must carry one of (default: the issuers).' },
  'oidc-issuer-url': { key: 'oidcIssuerURL', kind: 'string', help: 'https URL of the OpenID Connect issuer; enables ID token authentication.' },
  'oidc-client-id': { key: 'oidcClientID', kind: 'string', help: 'Client id all ID tokens must be issued for (audience).' },
  'oidc-username-claim': { key: 'oidcUsernameClaim', kind: 'string', help: 'Claim used as the user name (default sub).' },
  'oidc-username-prefix': { key: 'oidcUsernamePrefix', kind: 'string', help: 'Prefix of user names; "-" disables (default "<issuer url>#" unless the claim is email).' },
  'oidc-groups-claim': { key: 'oidcGroupsClaim', kind: 'string', help: 'Claim holding the groups (string or list of strings).' },
  'oidc-groups-prefix': { key: 'oidcGroupsPrefix', kind: 'string', help: 'Prefix of group names.' },
  'oidc-required-claim': { key: 'oidcRequiredClaims', kind: 'pair', help: 'key=value claim every ID token must carry; repeatable.' },
  'oidc-ca-file': { key: 'oidcCAFile', kind: 'string', help: 'CA of the issuer\'s web certificate (default: the host\'s roots).' },
  'oidc-signing-algs': { key: 'oidcSigningAlgs', kind: 'list', help: 'Accepted ID token signing algorithms (default RS256).' },
  'authentication-token-webhook-config-file': { key: 'webhookConfigFile', kind: 'string', help: 'Client configuration (kubeconfig format) of a remote service that reviews bearer tokens (TokenReview).' },
  'authentication-token-webhook-cache-ttl': { key: 'webhookCacheTTLSeconds', kind: 'duration', help: 'How long token webhook answers are cached (default 2m).' },
  'authentication-token-webhook-version': { key: 'webhookVersion', kind: 'string', help: 'TokenReview version sent to the token webhook: v1beta1 (default) or v1.' },
  'requestheader-username-headers': { key: 'requestheaderUsernameHeaders', kind: 'list', help: 'Headers a front proxy puts the user name in, first with a value wins (e.g. X-Remote-User).' },
  'requestheader-group-headers': { key: 'requestheaderGroupHeaders', kind: 'list', help: 'Headers a front proxy puts groups in (e.g. X-Remote-Group).' },
  'requestheader-extra-headers-prefix': { key: 'requestheaderExtraHeadersPrefixes', kind: 'list', help: 'Header prefixes of extra user attributes (e.g. X-Remote-Extra-).' },
  'requestheader-client-ca-file': { key: 'requestheaderClientCAFile', kind: 'string', help: 'CA bundle the front proxy\'s client certificate must verify against (presented on the secure port or --mtls-port); without it headers are ignored.' },
  'requestheader-allowed-names': { key: 'requestheaderAllowedNames', kind: 'list', help: 'Common names allowed for the front proxy\'s certificate (default: any from the CA).' },
  'enable-admission-plugins': { key: 'enableAdmissionPlugins', kind: 'list', help: 'Admission plugins to enable besides the default ones (order irrelevant).' },
  'disable-admission-plugins': { key: 'disableAdmissionPlugins', kind: 'list', help: 'Admission plugins to disable, default ones included.' },
  'admission-control-config-file': { key: 'admissionControlConfigFile', kind: 'string', help: 'Admission configuration file.' },
  'default-not-ready-toleration-seconds': { key: 'defaultNotReadyTolerationSeconds', kind: 'int', help: 'tolerationSeconds of the not-ready:NoExecute toleration DefaultTolerationSeconds adds to pods (default 300).' },
  'default-unreachable-toleration-seconds': { key: 'defaultUnreachableTolerationSeconds', kind: 'int', help: 'tolerationSeconds of the unreachable:NoExecute toleration DefaultTolerationSeconds adds to pods (default 300).' },
  'runtime-config': { key: 'runtimeConfig', kind: 'map', help: 'Enable or disable API groups/versions: key[=true|false],... (e.g. batch/v1=false,api/all).' },
  'step-aside': { key: 'stepAside', kind: 'map', help: 'Our controllers that do an external component\'s work, by its leader Lease name: name[=true|false],... true: always step aside, false: never; unnamed ones step aside while the Lease is held (e.g. kube-controller-manager=false).' },
  'feature-gates': { key: 'featureGates', kind: 'gates', help: 'Feature gates: Name=true|false,...' },
  'shutdown-delay-duration': { key: 'shutdownDelaySeconds', kind: 'duration', help: 'Time to keep serving after a termination signal (e.g. 10s).' },
  'livez-grace-period': { key: 'livezGracePeriodSeconds', kind: 'duration', help: 'Time after start during which /livez does not fail (e.g. 1m).' },
  'event-ttl': { key: 'eventTTLSeconds', kind: 'duration', help: 'How long Events are kept after their last write (default 1h): the options of the event-ttl controller.' },
  'storage-retention': { key: 'storageRetentionSeconds', kind: 'duration', help: 'How long the embedded store keeps history for watch resume (default 5m).' },
  'storage-start-empty': { key: 'storageStartEmpty', kind: 'bool', help: 'Start an empty embedded store in a data directory whose store is missing or empty although one was opened there before (default false: refused).' },
  'storage-group-commit': { key: 'storageGroupCommit', kind: 'bool', help: 'Batch concurrent writes into one durable commit (default true).' },
  'enable-priority-and-fairness': { key: 'enablePriorityAndFairness', kind: 'bool', help: 'API Priority and Fairness (the apf flow-control plugin; default true); false limits by --max-requests-inflight / --max-mutating-requests-inflight instead.' },
  'read-loops': { key: 'readLoops', kind: 'int', help: 'Threads besides the writer loop that serve connections, each with a replica of the store (default 0). They take client connections from the TLS front, so they need client certificates on the secure port (the default).' },
  'max-connections': { key: 'maxConnections', kind: 'int', help: 'Client connections a node:tls listener (the TLS front of the secure port, Node 22/24\'s transport, --mtls-port) takes at once; past it a new one is closed as it arrives (default 10,000, and at most what the open-file limit allows: docs/operations.md "Connections").' },
  'max-requests-inflight': { key: 'maxRequestsInflight', kind: 'int', help: 'Read requests in flight at once (default 400; 0: no limit). With APF: part of the server\'s total concurrency.' },
  'max-mutating-requests-inflight': { key: 'maxMutatingRequestsInflight', kind: 'int', help: 'Writes in flight at once (default 200; 0: no limit). With APF: part of the server\'s total concurrency.' },
  'request-timeout': { key: 'requestTimeoutSeconds', kind: 'duration', help: 'Time by which every request that is not long-running is answered, 504 when unfinished (default 1m); a request\'s ?timeout= can only shorten it. With APF a request waits in a queue at most a quarter of it (at most 1m).' },
  'storage-backend': { key: 'storageBackend', kind: 'string', help: 'Storage backend: embedded (default), etcd3, or memory (nothing survives a stop); any other name loads that storage plugin.' },
  'etcd-servers': { key: 'etcdServers', kind: 'list', help: 'etcd members (http:// or https:// URLs) for --storage-backend=etcd3.' },
  'etcd-cafile': { key: 'etcdCAFile', kind: 'string', help: 'CA bundle verifying the etcd members\' serving certificates (https:// servers).' },
  'etcd-certfile': { key: 'etcdCertFile', kind: 'string', help: 'Client certificate presented to etcd.' },
  'etcd-keyfile': { key: 'etcdKeyFile', kind: 'string', help: 'Private key of --etcd-certfile.' },
  'etcd-prefix': { key: 'etcdPrefix', kind: 'string', help: 'Prefix of every key this server writes in etcd (default /registry).' },
  'etcd-compaction-interval': { key: 'etcdCompactionIntervalSeconds', kind: 'duration', help: 'History etcd keeps for watch resume: compaction drops what is older (default 5m; 0 disables compaction).' },
  'leader-elect': { key: 'leaderElect', kind: 'bool', help: 'Run the controllers only while holding their Lease, one server at a time (default: on with a shared storage backend such as etcd3).' },
  'leader-elect-lease-duration': { key: 'leaderElectLeaseDurationSeconds', kind: 'duration', help: 'How long other servers wait after the last renewal before taking the controllers over (default 15s).' },
  'leader-elect-renew-deadline': { key: 'leaderElectRenewDeadlineSeconds', kind: 'duration', help: 'How long the leader keeps trying to renew before it stops its controllers (default 10s).' },
  'leader-elect-retry-period': { key: 'leaderElectRetryPeriodSeconds', kind: 'duration', help: 'How often the Lease is renewed or tried (default 2s).' },
  'audit-log-path': { key: 'auditLogPath', kind: 'string', help: 'Write audit events as JSON lines to this file ("-": standard output); enables the log audit backend.' },
  'audit-policy-file': { key: 'auditPolicyFile', kind: 'string', help: 'Audit policy (kind Policy, audit.<domain>/v1); without it the log backend records nothing.' },
  'audit-log-maxsize': { key: 'auditLogMaxSize', kind: 'int', help: 'Rotate the audit log when it would grow past this many megabytes (0: never).' },
  'audit-log-maxbackup': { key: 'auditLogMaxBackup', kind: 'int', help: 'Rotated audit log files to keep (0: all).' },
  'audit-log-maxage': { key: 'auditLogMaxAge', kind: 'int', help: 'Days to keep rotated audit log files, by the time in their name (0: no limit).' },
  'insecure-data-dir-permissions': { key: 'insecureDataDirPermissions', kind: 'bool', help: 'Serve a data directory that other users can read or enter (default false: such a directory is refused).' },
  'proxy-client-cert-file': { key: 'proxyClientCertFile', kind: 'string', help: 'Client certificate presented to extension API servers when proxying to them (with --proxy-client-key-file); unset: one signed at first start by a front-proxy CA under <data-dir>/pki.' },
  'proxy-client-key-file': { key: 'proxyClientKeyFile', kind: 'string', help: 'Private key of --proxy-client-cert-file.' },
  'enable-aggregator-routing': { key: 'enableAggregatorRouting', kind: 'bool', help: 'Proxy to an APIService\'s endpoint addresses (Endpoints) rather than its Service\'s cluster IP (the default, as in the reference).' },
  'encryption-provider-config': { key: 'encryptionProviderConfig', kind: 'string', help: 'EncryptionConfiguration (apiserver.config.k8s.io/v1) naming the resources encrypted at rest and their providers (aescbc, aesgcm, secretbox, identity); the first provider writes, all read.' },
  'logging-format': { key: 'loggingFormat', kind: 'string', help: 'Log format: text (klog-style lines, the default) or json (one JSON object a line).' },
  v: { key: 'verbosity', kind: 'int', help: 'Log verbosity, also -v: 0 start-up, warnings and errors (default); 3 one line per request (method, path, user, status, latency).' },
  'service-cluster-ip-range': { key: 'serviceClusterIPRange', kind: 'string', help: 'CIDR(s) Service cluster IPs come from: one, or an IPv4 and an IPv6 one for dual-stack (default 10.96.0.0/12).' },
  'service-node-port-range': { key: 'serviceNodePortRange', kind: 'string', help: 'Port range of Service node ports (default 30000-32767).' },
  'kubelet-client-certificate': { key: 'kubeletClientCertificate', kind: 'string', help: 'Client certificate (PEM) presented to node agents (pods/log, exec, attach, portforward, nodes/proxy).' },
  'kubelet-client-key': { key: 'kubeletClientKey', kind: 'string', help: 'Private key of --kubelet-client-certificate.' },
  'kubelet-preferred-address-types': { key: 'kubeletPreferredAddressTypes', kind: 'list', help: 'Node address types tried in order to reach a node agent (default Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP).' },
  'kubelet-certificate-authority': { key: 'kubeletCertificateAuthority', kind: 'string', help: 'CA bundle node agents\' serving certificates are verified against (unset: not verified, as the reference).' },
  'advertise-address': { key: 'advertiseAddresses', kind: 'list', help: 'Address(es) the server advertises in the endpoints of its own Service (default: the bind address, or the first host address when binding a wildcard).' },
  help: { key: 'help', kind: 'bool', help: 'Print this help.' },
};

// ---------------------------------------------------------------- authorization modes

export const AUTHORIZATION_MODES: Record<string, string> = {
  AlwaysAllow: 'always-allow',
  AlwaysDeny: 'always-deny',
  ABAC: 'abac',
  Webhook: 'webhook',
  RBAC: 'rbac',
  Node: 'node',
};

// ---------------------------------------------------------------- admission plugins

/**
 * Every admission plugin name, in the order the reference server runs them: namespace plugins first,
 * defaulting and policy in the middle, then webhooks, quota and the deny-all plugin last
 * (quota after webhooks so it counts what webhooks changed).
 */
export const REFERENCE_ADMISSION_ORDER: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'SecurityContextDeny',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodSecurityPolicy',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'DenyEscalatingExec',
  'DenyExecOnPrivileged',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'PersistentVolumeLabel',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/** Plugins on when no flag says otherwise (spec Part B, "Admission control"). */
export const DEFAULT_ADMISSION_PLUGINS: readonly string[] = [
  'CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction', 'DefaultIngressClass',
  'DefaultStorageClass', 'DefaultTolerationSeconds', 'LimitRanger', 'MutatingAdmissionWebhook',
  'NamespaceLifecycle', 'PersistentVolumeClaimResize', 'PodSecurity', 'Priority', 'ResourceQuota', 'RuntimeClass',
  'ServiceAccount', 'StorageObjectInUseProtection', 'TaintNodesByCondition', 'ValidatingAdmissionWebhook',
];

/**
 * Plugins this server turns on by default beyond the reference's default-on list, as every kubeadm
 * cluster does: the default authorizers include Node, whose role lets any node write any Node and pod
 * status; NodeRestriction keeps each node to its own (without it, one node's credentials reach all).
 */
export const SECURE_DEFAULT_ADMISSION: readonly string[] = ['NodeRestriction'];

/** Whether this build ships the built-in admission plugin (dist/plugins/admission/<name>/index.js). */
export function admissionPluginExists(name: string): boolean {
  if (!/^[A-Za-z0-9][\w.-]*$/.test(name)) return false;
  return existsSync(fileURLToPath(new URL('../../plugins/admission/' + name + '/index.js', import.meta.url)));
}

/** A name the admission flags and disableAdmissionPlugins accept: the reference's, or a built-in plugin's. */
export function knownAdmissionPlugin(name: string): boolean {
  return REFERENCE_ADMISSION_ORDER.includes(name) || admissionPluginExists(name);
}

const rank = (name: string): number => {
  const i = REFERENCE_ADMISSION_ORDER.indexOf(name);
  // plugins outside the reference list (npm packages, paths) run after the in-tree ones, before the webhooks
  return i >= 0 ? i : REFERENCE_ADMISSION_ORDER.indexOf('MutatingAdmissionWebhook') - 0.5;
};

/** Stable sort of admission plugin names into the reference order. */
export function orderAdmission(names: string[]): string[] {
  return names.map((n, i) => ({ n, i })).sort((a, b) => rank(a.n) - rank(b.n) || a.i - b.i).map((x) => x.n);
}

/** The default-on plugins this build has, in order: the default admission list. */
export function defaultAdmission(): string[] {
  return orderAdmission(DEFAULT_ADMISSION_PLUGINS.filter(admissionPluginExists));
}

/** What the server runs with no configuration: the reference's default-on plugins and SECURE_DEFAULT_ADMISSION. */
export function serverDefaultAdmission(): string[] {
  return orderAdmission([...defaultAdmission(), ...SECURE_DEFAULT_ADMISSION.filter(admissionPluginExists)]);
}

/** Default-on plugins not implemented yet: silently skipped, listed here so start-up can mention them. */
export function missingDefaultAdmission(): string[] {
  return orderAdmission(DEFAULT_ADMISSION_PLUGINS.filter((n) => !admissionPluginExists(n)));
}
