// Command-line flags, in the reference server's spelling, applied onto the configuration.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brands } from '../contracts/brand.js';
import type { Config, PluginRef } from './config.js';

/** Flag values after parsing; undefined = not given. */
export interface ParsedFlags {
  help?: boolean;
  config?: string;
  dataDir?: string;
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
  featureGates?: Record<string, boolean>;
  shutdownDelaySeconds?: number;
  livezGracePeriodSeconds?: number;
  storageRetentionSeconds?: number;
  eventTTLSeconds?: number;
  storageGroupCommit?: boolean;
  enablePriorityAndFairness?: boolean;
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
  requestTimeoutSeconds?: number;
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
type FlagKind = 'string' | 'bool' | 'port' | 'bytes' | 'int' | 'list' | 'array' | 'pair' | 'map' | 'gates' | 'duration';
interface FlagDef {
  key: keyof ParsedFlags;
  kind: FlagKind;
  help: string;
}

export const FLAGS: Record<string, FlagDef> = {
  config: { key: 'config', kind: 'string', help: 'Configuration file (YAML or JSON).' },
  'data-dir': { key: 'dataDir', kind: 'string', help: 'Directory for stored data and first-start credentials (default ./data).' },
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
  'feature-gates': { key: 'featureGates', kind: 'gates', help: 'Feature gates: Name=true|false,...' },
  'shutdown-delay-duration': { key: 'shutdownDelaySeconds', kind: 'duration', help: 'Time to keep serving after a termination signal (e.g. 10s).' },
  'livez-grace-period': { key: 'livezGracePeriodSeconds', kind: 'duration', help: 'Time after start during which /livez does not fail (e.g. 1m).' },
  'event-ttl': { key: 'eventTTLSeconds', kind: 'duration', help: 'How long Events are kept after their last write (default 1h): the options of the event-ttl controller.' },
  'storage-retention': { key: 'storageRetentionSeconds', kind: 'duration', help: 'How long the embedded store keeps history for watch resume (default 5m).' },
  'storage-group-commit': { key: 'storageGroupCommit', kind: 'bool', help: 'Batch concurrent writes into one durable commit (default true).' },
  'enable-priority-and-fairness': { key: 'enablePriorityAndFairness', kind: 'bool', help: 'API Priority and Fairness (the apf flow-control plugin; default true); false limits by --max-requests-inflight / --max-mutating-requests-inflight instead.' },
  'max-requests-inflight': { key: 'maxRequestsInflight', kind: 'int', help: 'Read requests in flight at once (default 400; 0: no limit). With APF: part of the server\'s total concurrency.' },
  'max-mutating-requests-inflight': { key: 'maxMutatingRequestsInflight', kind: 'int', help: 'Writes in flight at once (default 200; 0: no limit). With APF: part of the server\'s total concurrency.' },
  'request-timeout': { key: 'requestTimeoutSeconds', kind: 'duration', help: 'Time by which every request that is not long-running is answered, 504 when unfinished (default 1m); a request\'s ?timeout= can only shorten it. With APF a request waits in a queue at most a quarter of it (at most 1m).' },
  'storage-backend': { key: 'storageBackend', kind: 'string', help: 'Storage backend: embedded (default) or etcd3; any other name loads that storage plugin.' },
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

// ---------------------------------------------------------------- value parsers

const BOOL: Record<string, boolean> = { '1': true, t: true, true: true, '0': false, f: false, false: false };

function parseBool(flag: string, v: string): boolean {
  const b = BOOL[v.toLowerCase()];
  if (b === undefined) throw new Error(`invalid value "${v}" for --${flag}: must be true or false`);
  return b;
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, 'μs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** Go duration ("1m30s", "500ms", "0") → seconds. Negative durations are refused: none of ours make sense below zero. */
export function parseDuration(s: string): number {
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let i = 0;
  while (i < s.length) {
    re.lastIndex = i;
    const m = re.exec(s);
    if (!m) break;
    total += parseFloat(m[1]) * DURATION_UNITS[m[2]];
    i = re.lastIndex;
  }
  if (!s || i < s.length) throw new Error(`invalid duration "${s}" (examples: 10s, 1m30s, 500ms)`);
  return Math.round(total * 1e9) / 1e9; // whole nanoseconds, as Go keeps them
}

const splitList = (v: string): string[] => v.split(',').map((x) => x.trim()).filter(Boolean);

/** "k=v,k2": a missing value means true. */
function parseMap(flag: string, v: string, valueRequired: boolean): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const item of splitList(v)) {
    const eq = item.indexOf('=');
    const key = (eq < 0 ? item : item.slice(0, eq)).trim();
    if (!key) throw new Error(`invalid value "${v}" for --${flag}: empty key`);
    if (eq < 0 && valueRequired) throw new Error(`invalid value "${item}" for --${flag}: expected ${key}=true|false`);
    out[key] = eq < 0 ? true : parseBool(flag, item.slice(eq + 1).trim());
  }
  return out;
}

function parseInteger(flag: string, v: string, min: number, max: number): number {
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`invalid value "${v}" for --${flag}: must be an integer from ${min} to ${max}`);
  return n;
}

function convert(flag: string, def: FlagDef, v: string): unknown {
  switch (def.kind) {
    case 'string':
      if (!v) throw new Error(`flag --${flag} needs a non-empty value`);
      return v;
    case 'array':
      if (!v) throw new Error(`flag --${flag} needs a non-empty value`);
      return [v];
    case 'pair': {
      const eq = v.indexOf('=');
      if (eq <= 0) throw new Error(`invalid value "${v}" for --${flag}: expected key=value`);
      return { [v.slice(0, eq).trim()]: v.slice(eq + 1) };
    }
    case 'bool': return parseBool(flag, v);
    case 'port': return parseInteger(flag, v, 0, 65535);
    case 'bytes': return parseInteger(flag, v, 1, Number.MAX_SAFE_INTEGER);
    case 'int': return parseInteger(flag, v, 0, Number.MAX_SAFE_INTEGER);
    case 'list': return splitList(v);
    case 'map': return parseMap(flag, v, false);
    case 'gates': return parseMap(flag, v, true);
    case 'duration':
      try {
        return parseDuration(v);
      } catch (e) {
        throw new Error(`invalid value for --${flag}: ${(e as Error).message}`);
      }
  }
}

// ---------------------------------------------------------------- parsing

/** Parse argv (without node and script). `--name=value`, `--name value`; booleans `--flag` or `--flag=false`. */
export function parseFlags(argv: string[]): ParsedFlags {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h') {
      out.help = true;
      continue;
    }
    // -v is the one shorthand, as in the reference: -v=3, -v 3, -v3
    const short = /^-v(=?)(.*)$/.exec(arg);
    if (short) {
      const raw = short[2] || (short[1] ? '' : argv[++i] ?? '');
      out.verbosity = convert('v', FLAGS.v, raw);
      continue;
    }
    if (!arg.startsWith('--') || arg === '--') throw new Error(`unexpected argument: ${arg} (flags look like --name=value)`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const def = FLAGS[name];
    if (!def) throw new Error(`unknown flag: --${name}`);
    let raw: string;
    if (eq >= 0) raw = arg.slice(eq + 1);
    else if (def.kind === 'bool') raw = 'true'; // booleans never take the next argument, as in Go
    else if (i + 1 < argv.length) raw = argv[++i];
    else throw new Error(`flag needs an argument: --${name}`);
    const value = convert(name, def, raw);
    const prev = out[def.key];
    // repeated list and map flags accumulate; others: the last one wins
    if ((def.kind === 'list' || def.kind === 'array') && Array.isArray(prev)) out[def.key] = [...prev, ...(value as string[])];
    else if ((def.kind === 'map' || def.kind === 'gates' || def.kind === 'pair') && prev) out[def.key] = { ...(prev as object), ...(value as object) };
    else out[def.key] = value;
  }
  const f = out as ParsedFlags;
  if (f.brand !== undefined && !brands[f.brand]) throw new Error(`invalid value "${f.brand}" for --brand (known: ${Object.keys(brands).join(', ')})`);
  if (f.authorizationMode) f.authorizationMode = mapAuthorizationModes(f.authorizationMode);
  if (f.authorizationWebhookVersion !== undefined && f.authorizationWebhookVersion !== 'v1beta1' && f.authorizationWebhookVersion !== 'v1') {
    throw new Error(`invalid value "${f.authorizationWebhookVersion}" for --authorization-webhook-version: must be v1beta1 or v1`);
  }
  if (f.webhookVersion !== undefined && f.webhookVersion !== 'v1beta1' && f.webhookVersion !== 'v1') {
    throw new Error(`invalid value "${f.webhookVersion}" for --authentication-token-webhook-version: must be v1beta1 or v1`);
  }
  if (f.loggingFormat !== undefined && f.loggingFormat !== 'text' && f.loggingFormat !== 'json') throw new Error(`invalid value "${f.loggingFormat}" for --logging-format: must be text or json`);
  if (f.oidcIssuerURL !== undefined && !f.oidcIssuerURL.startsWith('https://')) throw new Error(`invalid value "${f.oidcIssuerURL}" for --oidc-issuer-url: must be an https URL`);
  checkAdmissionNames(f);
  return f;
}

function mapAuthorizationModes(modes: string[]): string[] {
  if (!modes.length) throw new Error('--authorization-mode needs at least one mode');
  const seen = new Set<string>();
  return modes.map((m) => {
    const plugin = AUTHORIZATION_MODES[m];
    if (!plugin) throw new Error(`unknown authorization mode "${m}" (known: ${Object.keys(AUTHORIZATION_MODES).join(', ')})`);
    if (seen.has(m)) throw new Error(`authorization mode "${m}" specified more than once`);
    seen.add(m);
    return plugin;
  });
}

function checkAdmissionNames(f: ParsedFlags): void {
  const known = (n: string) => REFERENCE_ADMISSION_ORDER.includes(n) || admissionPluginExists(n);
  for (const [flag, names] of [['enable-admission-plugins', f.enableAdmissionPlugins], ['disable-admission-plugins', f.disableAdmissionPlugins]] as const) {
    for (const n of names ?? []) {
      if (!known(n)) throw new Error(`unknown admission plugin "${n}" in --${flag} (known: ${REFERENCE_ADMISSION_ORDER.join(', ')})`);
    }
  }
  const both = (f.enableAdmissionPlugins ?? []).filter((n) => f.disableAdmissionPlugins?.includes(n));
  if (both.length) throw new Error(`admission plugin "${both[0]}" is both enabled and disabled`);
}

// ---------------------------------------------------------------- applying

/** Keep the options of an existing entry for the same plugin. */
const reuse = (list: PluginRef[], plugin: string): PluginRef => list.find((r) => r.plugin === plugin) ?? { plugin };

/**
 * Where flag-enabled authenticators go: the reference server's union order, anonymous last.
 * Entries of other plugins (paths, npm packages) keep their places.
 */
export const AUTHENTICATOR_ORDER: readonly string[] = ['request-header', 'x509', 'token-file', 'service-account', 'bootstrap-token', 'oidc', 'webhook', 'anonymous'];

/** Options whose value was given (undefined ones dropped). */
const given = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * Merge options into the list's entry for a plugin, or add an entry at its place in AUTHENTICATOR_ORDER
 * (before the first known entry that comes later).
 */
export function upsertAuthenticator(list: PluginRef[], plugin: string, options: Record<string, unknown> = {}): void {
  const ref = list.find((r) => r.plugin === plugin);
  if (ref) {
    if (Object.keys(options).length) ref.options = { ...ref.options, ...options };
    return;
  }
  const rank = AUTHENTICATOR_ORDER.indexOf(plugin);
  const at = list.findIndex((r) => AUTHENTICATOR_ORDER.indexOf(r.plugin) > rank);
  const entry: PluginRef = Object.keys(options).length ? { plugin, options } : { plugin };
  list.splice(at < 0 ? list.length : at, 0, entry);
}

/** The ABAC and Webhook authorizer flags onto their entries; each needs its mode, as in the reference. */
function applyAuthorizationFlags(c: Config, f: ParsedFlags): void {
  const entry = (plugin: string, flag: string, mode: string) => {
    const i = c.authorization.findIndex((r) => r.plugin === plugin);
    if (i < 0) throw new Error(`cannot specify --${flag} without mode ${mode}`);
    c.authorization[i] = { ...c.authorization[i], options: { ...c.authorization[i].options } };
    return c.authorization[i].options!;
  };
  if (f.authorizationPolicyFile !== undefined) entry('abac', 'authorization-policy-file', 'ABAC').policyFile = f.authorizationPolicyFile;
  const webhook = given({
    configFile: f.authorizationWebhookConfigFile, authorizedTTLSeconds: f.authorizationWebhookAuthorizedTTLSeconds,
    unauthorizedTTLSeconds: f.authorizationWebhookUnauthorizedTTLSeconds, version: f.authorizationWebhookVersion,
  });
  if (Object.keys(webhook).length) Object.assign(entry('webhook', 'authorization-webhook-config-file', 'Webhook'), webhook);
}

/** The authentication flags onto the configuration's authenticator list. */
function applyAuthenticationFlags(c: Config, f: ParsedFlags): void {
  const list = c.authentication;
  const any = (...v: unknown[]) => v.some((x) => x !== undefined);
  if (any(f.requestheaderUsernameHeaders, f.requestheaderGroupHeaders, f.requestheaderExtraHeadersPrefixes, f.requestheaderClientCAFile, f.requestheaderAllowedNames)) {
    upsertAuthenticator(list, 'request-header', given({
      usernameHeaders: f.requestheaderUsernameHeaders, groupHeaders: f.requestheaderGroupHeaders, extraHeadersPrefixes: f.requestheaderExtraHeadersPrefixes,
      clientCAFile: f.requestheaderClientCAFile, allowedNames: f.requestheaderAllowedNames,
    }));
  }
  if (f.clientCAFile !== undefined) upsertAuthenticator(list, 'x509', { clientCAFile: f.clientCAFile });
  if (f.tokenAuthFile !== undefined) upsertAuthenticator(list, 'token-file', { file: f.tokenAuthFile });
  if (any(f.serviceAccountKeyFiles, f.serviceAccountIssuers, f.serviceAccountLookup, f.apiAudiences)) {
    const issuers = f.serviceAccountIssuers;
    upsertAuthenticator(list, 'service-account', given({
      keyFiles: f.serviceAccountKeyFiles, issuer: issuers && issuers.length === 1 ? issuers[0] : issuers, lookup: f.serviceAccountLookup, audiences: f.apiAudiences,
    }));
    // The token controller issues with the first issuer, for the API audiences, as the authenticator expects.
    const tokenOptions = given({ issuer: issuers?.[0], audiences: f.apiAudiences ?? issuers });
    if (Object.keys(tokenOptions).length) c.controllers = c.controllers.map((r) => (r.plugin === 'serviceaccount-token' ? { ...r, options: { ...r.options, ...tokenOptions } } : r));
  }
  if (f.enableBootstrapTokenAuth === true) upsertAuthenticator(list, 'bootstrap-token');
  if (f.enableBootstrapTokenAuth === false) c.authentication = c.authentication.filter((r) => r.plugin !== 'bootstrap-token');
  if (any(f.oidcIssuerURL, f.oidcClientID, f.oidcUsernameClaim, f.oidcUsernamePrefix, f.oidcGroupsClaim, f.oidcGroupsPrefix, f.oidcRequiredClaims, f.oidcCAFile, f.oidcSigningAlgs)) {
    const prev = (c.authentication.find((r) => r.plugin === 'oidc')?.options?.requiredClaims ?? {}) as Record<string, string>;
    upsertAuthenticator(c.authentication, 'oidc', given({
      issuerURL: f.oidcIssuerURL, clientID: f.oidcClientID, usernameClaim: f.oidcUsernameClaim, usernamePrefix: f.oidcUsernamePrefix,
      groupsClaim: f.oidcGroupsClaim, groupsPrefix: f.oidcGroupsPrefix, requiredClaims: f.oidcRequiredClaims && { ...prev, ...f.oidcRequiredClaims },
      caFile: f.oidcCAFile, signingAlgs: f.oidcSigningAlgs,
    }));
  }
  if (any(f.webhookConfigFile, f.webhookCacheTTLSeconds, f.webhookVersion)) {
    upsertAuthenticator(c.authentication, 'webhook', given({ configFile: f.webhookConfigFile, cacheTTLSeconds: f.webhookCacheTTLSeconds, version: f.webhookVersion }));
  }
}

/**
 * Overlay flags on a configuration (defaults merged with the file). Defaults must already be built for the
 * final data directory; loadConfig does that.
 */
export function applyFlags(base: Config, f: ParsedFlags): Config {
  const c = structuredClone(base);
  if (f.dataDir !== undefined) c.dataDir = f.dataDir;
  if (f.insecureDataDirPermissions !== undefined) c.insecureDataDirPermissions = f.insecureDataDirPermissions;
  if (f.encryptionProviderConfig !== undefined) c.encryptionProviderConfig = f.encryptionProviderConfig;
  if (f.proxyClientCertFile !== undefined || f.proxyClientKeyFile !== undefined) c.proxyClient = given({ certFile: f.proxyClientCertFile, keyFile: f.proxyClientKeyFile }) as Config['proxyClient'];
  if (f.enableAggregatorRouting !== undefined) c.controllers = c.controllers.map((r) => (r.plugin === 'apiservice' ? { ...r, options: { ...r.options, enableAggregatorRouting: f.enableAggregatorRouting } } : r));
  if (f.loggingFormat !== undefined) c.loggingFormat = f.loggingFormat as Config['loggingFormat'];
  if (f.verbosity !== undefined) c.verbosity = f.verbosity;
  if (f.bindAddress !== undefined) c.bindAddress = f.bindAddress;
  if (f.securePort !== undefined) c.securePort = f.securePort;
  if (f.mtlsPort !== undefined) c.mtlsPort = f.mtlsPort;
  if (f.securePortClientCerts !== undefined) c.securePortClientCerts = f.securePortClientCerts;
  if (f.brand !== undefined) c.brand = f.brand;
  if (f.tlsCertFile !== undefined) c.tls.certFile = f.tlsCertFile;
  if (f.tlsPrivateKeyFile !== undefined) c.tls.keyFile = f.tlsPrivateKeyFile;
  if (f.maxRequestBytes !== undefined) c.maxRequestBodyBytes = f.maxRequestBytes;
  if (f.authorizationMode) c.authorization = f.authorizationMode.map((p) => reuse(base.authorization, p));
  applyAuthorizationFlags(c, f);
  applyAuthenticationFlags(c, f);
  if (f.anonymousAuth === false) c.authentication = c.authentication.filter((r) => r.plugin !== 'anonymous');
  if (f.anonymousAuth === true && !c.authentication.some((r) => r.plugin === 'anonymous')) c.authentication.push({ plugin: 'anonymous' });
  if (f.enableAdmissionPlugins || f.disableAdmissionPlugins) {
    // default-on plugins only count when they exist; explicitly enabled ones always do, so the loader reports them
    const names = new Set([...c.admission.map((r) => r.plugin), ...(f.enableAdmissionPlugins ?? [])]);
    for (const n of f.disableAdmissionPlugins ?? []) names.delete(n);
    c.admission = orderAdmission([...names]).map((n) => reuse(base.admission, n));
  }
  if (f.admissionControlConfigFile !== undefined) c.admissionConfigFile = f.admissionControlConfigFile;
  const tolerations = given({ defaultNotReadyTolerationSeconds: f.defaultNotReadyTolerationSeconds, defaultUnreachableTolerationSeconds: f.defaultUnreachableTolerationSeconds });
  if (Object.keys(tolerations).length) {
    c.admission = c.admission.map((r) => (r.plugin === 'DefaultTolerationSeconds' ? { ...r, options: { ...r.options, ...tolerations } } : r));
  }
  if (f.serviceClusterIPRange !== undefined) c.serviceClusterIPRange = f.serviceClusterIPRange;
  if (f.serviceNodePortRange !== undefined) c.serviceNodePortRange = f.serviceNodePortRange;
  if (f.advertiseAddresses !== undefined) c.advertiseAddresses = f.advertiseAddresses;
  const kubelet = given({ kubeletClientCertificate: f.kubeletClientCertificate, kubeletClientKey: f.kubeletClientKey, kubeletCertificateAuthority: f.kubeletCertificateAuthority, kubeletPreferredAddressTypes: f.kubeletPreferredAddressTypes });
  if (Object.keys(kubelet).length) c.types = c.types.map((r) => (r.plugin === 'builtin' ? { ...r, options: { ...r.options, ...kubelet } } : r));
  if (f.runtimeConfig) c.runtimeConfig = { ...c.runtimeConfig, ...f.runtimeConfig };
  if (f.featureGates) c.featureGates = { ...c.featureGates, ...f.featureGates };
  if (f.shutdownDelaySeconds !== undefined) c.shutdownDelaySeconds = f.shutdownDelaySeconds;
  if (f.livezGracePeriodSeconds !== undefined) c.livezGracePeriodSeconds = f.livezGracePeriodSeconds;
  if (f.requestTimeoutSeconds !== undefined) c.requestTimeoutSeconds = f.requestTimeoutSeconds;
  if (f.storageBackend !== undefined && f.storageBackend !== c.storage.plugin) c.storage = { plugin: f.storageBackend, options: f.storageBackend === 'etcd3' ? { retentionSeconds: 300 } : {} };
  const etcd = given({ servers: f.etcdServers, caFile: f.etcdCAFile, certFile: f.etcdCertFile, keyFile: f.etcdKeyFile, prefix: f.etcdPrefix, retentionSeconds: f.etcdCompactionIntervalSeconds });
  if (Object.keys(etcd).length) {
    if (c.storage.plugin !== 'etcd3') throw new Error('--etcd-* flags need --storage-backend=etcd3');
    c.storage.options = { ...c.storage.options, ...etcd };
  }
  const le = given({ enabled: f.leaderElect, leaseDurationSeconds: f.leaderElectLeaseDurationSeconds, renewDeadlineSeconds: f.leaderElectRenewDeadlineSeconds, retryPeriodSeconds: f.leaderElectRetryPeriodSeconds });
  if (Object.keys(le).length) c.leaderElection = { ...c.leaderElection, ...le };
  if (f.storageRetentionSeconds !== undefined) c.storage.options = { ...c.storage.options, retentionSeconds: f.storageRetentionSeconds };
  if (f.storageGroupCommit !== undefined) c.storage.options = { ...c.storage.options, groupCommit: f.storageGroupCommit };
  applyFlowControlFlags(c, f);
  if (f.eventTTLSeconds !== undefined) {
    // the flag says Events expire: the controller runs even if a configuration file left it out
    if (!c.controllers.some((r) => r.plugin === 'event-ttl')) c.controllers = [...c.controllers, { plugin: 'event-ttl' }];
    c.controllers = c.controllers.map((r) => (r.plugin === 'event-ttl' ? { ...r, options: { ...r.options, ttlSeconds: f.eventTTLSeconds } } : r));
  }
  // The signing flags set the options of every configured signer (the built-in ones read them).
  const signing = given({ certFile: f.clusterSigningCertFile, keyFile: f.clusterSigningKeyFile, durationSeconds: f.clusterSigningDurationSeconds });
  if (Object.keys(signing).length) c.signers = c.signers.map((r) => ({ ...r, options: { ...r.options, ...signing } }));
  // The audit flags take effect with --audit-log-path, as in the reference: they set the options of the
  // `log` audit backend (merged into the file's entry for it, if any; other backends stay).
  if (f.auditLogPath !== undefined) {
    const options = given({ path: f.auditLogPath, policyFile: f.auditPolicyFile, maxSizeMB: f.auditLogMaxSize, maxBackups: f.auditLogMaxBackup, maxAgeDays: f.auditLogMaxAge });
    c.audit = [...(c.audit ?? [])];
    const i = c.audit.findIndex((r) => r.plugin === 'log');
    if (i >= 0) c.audit[i] = { plugin: 'log', options: { ...c.audit[i].options, ...options } };
    else c.audit.push({ plugin: 'log', options });
  }
  return c;
}

/** --enable-priority-and-fairness and the in-flight limits choose and size the flow-control plugin, as in the reference. */
function applyFlowControlFlags(c: Config, f: ParsedFlags): void {
  const read = f.maxRequestsInflight;
  const mutating = f.maxMutatingRequestsInflight;
  if (f.enablePriorityAndFairness === false) {
    c.flowControl = { plugin: 'max-inflight', options: given({ maxRequestsInflight: read, maxMutatingRequestsInflight: mutating }) };
    return;
  }
  if (f.enablePriorityAndFairness === true && c.flowControl.plugin !== 'apf') c.flowControl = { plugin: 'apf' };
  if (c.flowControl.plugin !== 'apf') return;
  const options = { ...c.flowControl.options };
  if (read !== undefined || mutating !== undefined) options.serverConcurrencyLimit = (read ?? 400) + (mutating ?? 200);
  if (f.requestTimeoutSeconds !== undefined) options.queueWaitSeconds = Math.min(60, f.requestTimeoutSeconds / 4);
  c.flowControl = { plugin: 'apf', options };
}

/** The --help text. */
export function usage(): string {
  const lines = ['Usage: cluster-apiserver [flags]', '', 'Flags:'];
  for (const [name, def] of Object.entries(FLAGS)) {
    const arg = def.kind === 'bool' ? (name === 'help' ? '' : '[=true|false]') : def.kind === 'duration' ? '=<duration>' : def.kind === 'list' ? '=<a,b,...>' : def.kind === 'map' || def.kind === 'gates' ? '=<k=v,...>' : def.kind === 'pair' ? '=<key=value>' : '=<value>';
    lines.push(`  --${(name + arg).padEnd(44)} ${def.help}`);
  }
  lines.push('', 'Without --config, the file named by $CLUSTER_APISERVER_CONFIG is read if set. Flags override the file.', '');
  return lines.join('\n');
}
