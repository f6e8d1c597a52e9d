// Command-line flags, in the reference server's spelling, applied onto the configuration. The flag
// table and the admission plugin lists are data in flagtable.ts (re-exported here).
import { brands } from '../contracts/brand.js';
import type { Config, PluginRef } from './configtypes.js';
import { AUTHORIZATION_MODES, FLAGS, REFERENCE_ADMISSION_ORDER, knownAdmissionPlugin, orderAdmission, type FlagDef, type ParsedFlags } from './flagtable.js';

export {
  AUTHORIZATION_MODES, DEFAULT_ADMISSION_PLUGINS, FLAGS, REFERENCE_ADMISSION_ORDER, SECURE_DEFAULT_ADMISSION,
  admissionPluginExists, defaultAdmission, missingDefaultAdmission, orderAdmission, serverDefaultAdmission, type ParsedFlags,
} from './flagtable.js';

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
  for (const [flag, names] of [['enable-admission-plugins', f.enableAdmissionPlugins], ['disable-admission-plugins', f.disableAdmissionPlugins]] as const) {
    for (const n of names ?? []) {
      if (!knownAdmissionPlugin(n)) throw new Error(`unknown admission plugin "${n}" in --${flag} (known: ${REFERENCE_ADMISSION_ORDER.join(', ')})`);
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
  if (f.stepAside) c.stepAside = { ...c.stepAside, ...f.stepAside };
  if (f.featureGates) c.featureGates = { ...c.featureGates, ...f.featureGates };
  if (f.shutdownDelaySeconds !== undefined) c.shutdownDelaySeconds = f.shutdownDelaySeconds;
  if (f.livezGracePeriodSeconds !== undefined) c.livezGracePeriodSeconds = f.livezGracePeriodSeconds;
  if (f.requestTimeoutSeconds !== undefined) c.requestTimeoutSeconds = f.requestTimeoutSeconds;
  if (f.readLoops !== undefined) c.readLoops = f.readLoops;
  if (f.maxConnections !== undefined) c.maxConnections = f.maxConnections;
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
  if (f.storageStartEmpty !== undefined) c.storage.options = { ...c.storage.options, startEmpty: f.storageStartEmpty };
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
