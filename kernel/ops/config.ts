// The server configuration: defaults, an optional YAML/JSON file, then command-line flags on top.
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import YAML from 'yaml';
import { brands } from '../contracts/brand.js';
import type { Config, FileConfig, PluginRef } from './configtypes.js';
import type { PluginKind } from '../contracts/index.js';
import { applyFlags, parseFlags, usage, type ParsedFlags } from './flags.js';
import { knownAdmissionPlugin, orderAdmission, serverDefaultAdmission } from './flagtable.js';

export type { Config, FileConfig, PluginRef } from './configtypes.js';

const pluginRef = {
  type: 'object',
  required: ['plugin'],
  additionalProperties: false,
  // options are the plugin's own business, so they stay free-form
  properties: { plugin: { type: 'string', minLength: 1 }, options: { type: 'object' } },
};
const pluginList = { type: 'array', items: pluginRef };
const boolMap = { type: 'object', additionalProperties: { type: 'boolean' } };
const seconds = { type: 'number', minimum: 0 };

/** JSON schema of the configuration file (and of the final configuration): every key optional, none unknown. */
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    brand: { type: 'string', enum: Object.keys(brands) },
    dataDir: { type: 'string', minLength: 1 },
    bindAddress: { type: 'string', minLength: 1 },
    securePort: { type: 'integer', minimum: 0, maximum: 65535 },
    mtlsPort: { type: 'integer', minimum: 0, maximum: 65535 },
    securePortClientCerts: { type: 'boolean' },
    tls: {
      type: 'object',
      additionalProperties: false,
      properties: { certFile: { type: 'string', minLength: 1 }, keyFile: { type: 'string', minLength: 1 } },
    },
    maxRequestBodyBytes: { type: 'integer', minimum: 1 },
    storage: pluginRef,
    types: pluginList,
    authentication: pluginList,
    authorization: pluginList,
    admission: pluginList,
    enableAdmissionPlugins: pluginList,
    disableAdmissionPlugins: { type: 'array', items: { type: 'string', minLength: 1 } },
    replaceAdmissionPlugins: pluginList,
    controllers: pluginList,
    enableControllers: pluginList,
    disableControllers: { type: 'array', items: { type: 'string', minLength: 1 } },
    leaderElection: {
      type: 'object',
      additionalProperties: false,
      properties: { enabled: { type: 'boolean' }, leaseDurationSeconds: { type: 'number', exclusiveMinimum: 0 }, renewDeadlineSeconds: { type: 'number', exclusiveMinimum: 0 }, retryPeriodSeconds: { type: 'number', exclusiveMinimum: 0 } },
    },
    signers: pluginList,
    audit: pluginList,
    flowControl: pluginRef,
    featureGates: boolMap,
    runtimeConfig: boolMap,
    stepAside: boolMap,
    shutdownDelaySeconds: seconds,
    livezGracePeriodSeconds: seconds,
    requestTimeoutSeconds: { type: 'number', exclusiveMinimum: 0 },
    readLoops: { type: 'integer', minimum: 0, maximum: 64 },
    maxConnections: { type: 'integer', minimum: 1 },
    emulatedVersion: {
      type: 'object',
      additionalProperties: false,
      properties: {
        major: { type: 'string', pattern: '^[0-9]+$' },
        minor: { type: 'string', pattern: '^[0-9]+$' },
        gitVersion: { type: 'string', minLength: 1 },
      },
    },
    admissionConfigFile: { type: 'string', minLength: 1 },
    insecureDataDirPermissions: { type: 'boolean' },
    encryptionProviderConfig: { type: 'string', minLength: 1 },
    proxyClient: {
      type: 'object',
      additionalProperties: false,
      properties: { certFile: { type: 'string', minLength: 1 }, keyFile: { type: 'string', minLength: 1 } },
    },
    loggingFormat: { type: 'string', enum: ['text', 'json'] },
    verbosity: { type: 'integer', minimum: 0, maximum: 10 },
    serviceClusterIPRange: { type: 'string', minLength: 1 },
    serviceNodePortRange: { type: 'string', pattern: '^[0-9]+[-+][0-9]+$' },
    advertiseAddresses: { type: 'array', items: { type: 'string', minLength: 1 } },
  },
} as const;

// Compiled at the first check, not at import: a start without a config file never pays for it.
// The schema is ours and fixed, so ajv need not validate it against its meta-schema each start.
let compiled: ReturnType<Ajv['compile']> | undefined;
const validateSchema = (value: unknown) => (compiled ??= new Ajv({ allErrors: true, validateSchema: false }).compile(configSchema))(value);

function describe(err: ErrorObject): string {
  const at = err.instancePath || '/';
  if (err.keyword === 'additionalProperties') return `unknown key "${(err.params as { additionalProperty: string }).additionalProperty}" at ${at}`;
  if (err.keyword === 'enum') return `${at}: ${err.message} (${(err.params as { allowedValues: unknown[] }).allowedValues.join(', ')})`;
  return `${at}: ${err.message}`;
}

/** Throws `<what>: <problem>; <problem>` when value does not match the schema. */
function check(value: unknown, what: string): void {
  if (!validateSchema(value)) throw new Error(`${what}: ${(compiled!.errors ?? []).map(describe).join('; ')}`);
}

export const DEFAULT_DATA_DIR = './data';

/** The token file the first start writes, under a data directory. */
export function defaultTokenFile(dataDir: string): string {
  return path.join(dataDir, 'pki', 'tokens.csv');
}

/** Defaults; paths that live under the data directory follow `dataDir`. */
export function defaultConfig(dataDir = DEFAULT_DATA_DIR): Config {
  return {
    brand: 'cluster',
    dataDir,
    bindAddress: '127.0.0.1',
    securePort: 6443,
    tls: {},
    maxRequestBodyBytes: 3 * 1024 * 1024,
    storage: { plugin: 'embedded', options: { retentionSeconds: 300, groupCommit: true } },
    types: [{ plugin: 'builtin' }, { plugin: 'access' }, { plugin: 'apiextensions' }, { plugin: 'apiregistration' }, { plugin: 'certificates' }],
    // What a careful operator runs: client certificates from the first-start CA, the first-start
    // admin token, service-account and bootstrap tokens; anonymous requests reach only what the
    // default RBAC roles grant them (health and version); Node then RBAC decide.
    authentication: [
      { plugin: 'x509', options: { clientCAFile: path.join(dataDir, 'pki', 'ca.crt') } },
      { plugin: 'token-file', options: { file: defaultTokenFile(dataDir) } },
      { plugin: 'service-account' },
      { plugin: 'bootstrap-token' },
      { plugin: 'anonymous' },
    ],
    authorization: [{ plugin: 'node' }, { plugin: 'rbac' }],
    // the default-on admission plugins that exist in this build, and NodeRestriction, in the reference order
    admission: serverDefaultAdmission().map((plugin) => ({ plugin })),
    // The certificate controllers under the reference's --controllers names.
    controllers: ['system-namespaces', 'namespace', 'garbage-collector', 'storage-protection', 'crd', 'apiservice', 'apiserver-service', 'disruption', 'flowcontrol-config', 'root-ca-publisher', 'cluster-authentication-trust', 'csrsigning', 'csrapproving', 'csrcleaner', 'serviceaccount', 'serviceaccount-token', 'tokencleaner', 'bootstrapsigner', 'event-ttl'].map((plugin) => ({ plugin })),
    // the reference controller manager's lease timings
    leaderElection: { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 },
    signers: ['apiserver-client', 'apiserver-client-nodeagent', 'nodeagent-serving', 'legacy-unknown'].map((plugin) => ({ plugin })),
    audit: [],
    // the reference's defaults: 400 + 200 seats in all, a quarter of the 1m request timeout in a queue at most
    flowControl: { plugin: 'apf', options: { serverConcurrencyLimit: 600, queueWaitSeconds: 15 } },
    featureGates: {},
    runtimeConfig: {},
    stepAside: {},
    shutdownDelaySeconds: 0,
    livezGracePeriodSeconds: 0,
    requestTimeoutSeconds: 60,
    readLoops: 0,
    emulatedVersion: { major: '1', minor: '28', gitVersion: 'v1.28.7' },
    loggingFormat: 'text',
    verbosity: 0,
    serviceClusterIPRange: '10.96.0.0/12',
    serviceNodePortRange: '30000-32767',
  };
}

/** Read and validate a config file; YAML or JSON, told apart by content. Relative paths in it are made relative to its directory. */
export async function readConfigFile(file: string): Promise<FileConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new Error(`config file ${file}: ${(e as Error).message}`);
  }
  let data: unknown;
  try {
    const t = text.trimStart();
    data = t.startsWith('{') || t.startsWith('[') ? JSON.parse(t) : YAML.parse(text);
  } catch (e) {
    throw new Error(`config file ${file}: cannot parse: ${(e as Error).message}`);
  }
  data ??= {}; // an empty file is an empty configuration
  check(data, `config file ${file}`);
  const fc = data as FileConfig;
  checkAdmissionKeys(fc, `config file ${file}`);
  const dir = path.dirname(file);
  const rel = (p: string | undefined) => (p === undefined ? undefined : path.resolve(dir, p));
  if (fc.dataDir !== undefined) fc.dataDir = rel(fc.dataDir);
  if (fc.admissionConfigFile !== undefined) fc.admissionConfigFile = rel(fc.admissionConfigFile);
  if (fc.encryptionProviderConfig !== undefined) fc.encryptionProviderConfig = rel(fc.encryptionProviderConfig);
  if (fc.tls) fc.tls = { certFile: rel(fc.tls.certFile), keyFile: rel(fc.tls.keyFile) };
  if (fc.proxyClient) fc.proxyClient = { certFile: rel(fc.proxyClient.certFile), keyFile: rel(fc.proxyClient.keyFile) };
  return fc;
}

/** The admission keys of a file say one thing: a whole list, or additions and removals, and never both for a name. */
function checkAdmissionKeys(fc: FileConfig, at: string): void {
  if (fc.admission && fc.replaceAdmissionPlugins) throw new Error(`${at}: "admission" is the old spelling of "replaceAdmissionPlugins": give one of them`);
  const replacing = fc.replaceAdmissionPlugins ? 'replaceAdmissionPlugins' : fc.admission ? 'admission' : undefined;
  const toggling = fc.enableAdmissionPlugins ? 'enableAdmissionPlugins' : fc.disableAdmissionPlugins ? 'disableAdmissionPlugins' : undefined;
  if (replacing && toggling) throw new Error(`${at}: "${replacing}" replaces the whole admission list, so "${toggling}" has nothing to change: give one or the other`);
  for (const n of fc.disableAdmissionPlugins ?? []) {
    if (!knownAdmissionPlugin(n)) throw new Error(`${at}: unknown admission plugin "${n}" in disableAdmissionPlugins`);
  }
  const both = (fc.enableAdmissionPlugins ?? []).find((r) => fc.disableAdmissionPlugins?.includes(r.plugin));
  if (both) throw new Error(`${at}: admission plugin "${both.plugin}" is both enabled and disabled`);
}

/**
 * The admission list a file asks for over `base`: enabled entries join it (one already on merges its
 * options), disabled names leave it, and the result runs in the reference order, as with the flags;
 * a replacing list is taken as written.
 */
function fileAdmission(base: PluginRef[], f: FileConfig): PluginRef[] {
  const whole = f.replaceAdmissionPlugins ?? f.admission;
  if (whole) return whole;
  const byName = new Map(base.map((r) => [r.plugin, r]));
  for (const r of f.enableAdmissionPlugins ?? []) {
    const on = byName.get(r.plugin);
    byName.set(r.plugin, on && (on.options || r.options) ? { plugin: r.plugin, options: { ...on.options, ...r.options } } : on ?? r);
  }
  for (const n of f.disableAdmissionPlugins ?? []) byName.delete(n);
  return orderAdmission([...byName.keys()]).map((n) => byName.get(n)!);
}

/**
 * The warning an old-style `admission` list earns: it still replaces the default list, as it always
 * has, and one that leaves out default plugins (the security ones among them) is most likely a list
 * written to add a plugin. None for the other keys, which say what they do.
 */
export function admissionWarning(f: FileConfig, defaults: PluginRef[] = defaultConfig().admission): string | undefined {
  if (!f.admission) return undefined;
  const kept = new Set(f.admission.map((r) => r.plugin));
  const dropped = defaults.map((r) => r.plugin).filter((n) => !kept.has(n));
  const how = 'use enableAdmissionPlugins to add plugins to the defaults (and disableAdmissionPlugins to take some out), or replaceAdmissionPlugins to replace the list on purpose';
  if (!dropped.length) return `the configuration file's admission list replaces the default admission plugins (it names them all): ${how}`;
  return `the configuration file's admission list REPLACES the default admission plugins and leaves out ${dropped.length} of them, which do not run: ${dropped.join(', ')}; ${how}`;
}

/** A plugin list with entries added (an entry for a plugin already listed merges its options) and names taken out. */
function toggled(list: PluginRef[], enable: PluginRef[] = [], disable: string[] = []): PluginRef[] {
  const out = list.map((r) => ({ ...r }));
  for (const e of enable) {
    const on = out.find((r) => r.plugin === e.plugin);
    if (on) on.options = { ...on.options, ...e.options };
    else out.push({ ...e });
  }
  return out.filter((r) => !disable.includes(r.plugin));
}

/** Overlay a file's settings on a base: lists replace, maps merge, storage options merge when the plugin is the same. */
export function mergeConfig(base: Config, f: FileConfig): Config {
  const c = structuredClone(base);
  const g = structuredClone(f);
  const { tls, featureGates, runtimeConfig, stepAside, emulatedVersion, storage, leaderElection, admission: _, enableAdmissionPlugins: _e, disableAdmissionPlugins: _d, replaceAdmissionPlugins: _r, enableControllers, disableControllers, ...rest } = g;
  Object.assign(c, rest);
  c.admission = fileAdmission(c.admission, g);
  c.controllers = toggled(c.controllers, enableControllers, disableControllers);
  if (leaderElection) c.leaderElection = { ...c.leaderElection, ...leaderElection };
  if (tls) c.tls = Object.fromEntries(Object.entries({ ...c.tls, ...tls }).filter(([, v]) => v !== undefined));
  if (featureGates) c.featureGates = { ...c.featureGates, ...featureGates };
  if (runtimeConfig) c.runtimeConfig = { ...c.runtimeConfig, ...runtimeConfig };
  if (stepAside) c.stepAside = { ...c.stepAside, ...stepAside };
  if (storage) {
    c.storage = storage.plugin === c.storage.plugin ? { plugin: storage.plugin, options: { ...c.storage.options, ...storage.options } } : storage;
  }
  if (emulatedVersion) {
    const ev = { ...c.emulatedVersion, ...emulatedVersion };
    // a new major/minor without an explicit gitVersion gets the matching .0 release
    if (emulatedVersion.gitVersion === undefined) ev.gitVersion = `v${ev.major}.${ev.minor}.0`;
    c.emulatedVersion = ev;
  }
  return c;
}

/** A token-file authenticator named without a file reads the data directory's token file. */
function fillTokenFile(c: Config): void {
  for (const ref of c.authentication) {
    if (ref.plugin === 'token-file' && ref.options?.file === undefined) ref.options = { ...ref.options, file: defaultTokenFile(c.dataDir) };
  }
}

/**
 * A service-account authenticator named without key files verifies with the serving key, as the
 * reference does: --tls-private-key-file when given (the plugin itself falls back to the first-start
 * key <dataDir>/pki/apiserver.key).
 */
function fillServiceAccountKeys(c: Config): void {
  if (!c.tls.keyFile) return;
  for (const ref of c.authentication) {
    if (ref.plugin === 'service-account' && ref.options?.keyFiles === undefined) ref.options = { ...ref.options, keyFiles: [c.tls.keyFile] };
  }
}

/** The service ranges and advertised addresses reach the plugins that use them, unless their options say otherwise. */
export function fillServiceOptions(c: Config): void {
  const fill = (ref: PluginRef, values: Record<string, unknown>) => {
    const given = Object.fromEntries(Object.entries(values).filter(([k, v]) => v !== undefined && ref.options?.[k] === undefined));
    if (Object.keys(given).length) ref.options = { ...ref.options, ...given };
  };
  for (const ref of c.types) if (ref.plugin === 'builtin') fill(ref, { serviceClusterIPRange: c.serviceClusterIPRange, serviceNodePortRange: c.serviceNodePortRange });
  for (const ref of c.controllers) {
    if (ref.plugin === 'apiserver-service') fill(ref, { serviceClusterIPRange: c.serviceClusterIPRange, advertiseAddresses: c.advertiseAddresses, bindAddress: c.bindAddress });
    // simulated nodes report the emulated release as their node agents' version
    if (ref.plugin === 'simulated-nodes') fill(ref, { kubeletVersion: c.emulatedVersion.gitVersion });
  }
}

/**
 * Flags over config file over defaults. The file is `--config`, else env CLUSTER_APISERVER_CONFIG.
 * `--help` prints usage and exits.
 */
export async function loadConfig(argv: string[], env: Record<string, string | undefined> = process.env): Promise<Config> {
  const flags = parseFlags(argv);
  if (flags.help) {
    process.stdout.write(usage());
    process.exit(0);
  }
  const configFile = flags.config ?? (env.CLUSTER_APISERVER_CONFIG || undefined);
  const file = configFile ? await readConfigFile(path.resolve(configFile)) : {};
  if (flags.ephemeral) ephemeralFlags(flags, file);
  // defaults are built for the final data directory so their paths (token file) follow it
  const dataDir = flags.dataDir ?? file.dataDir ?? DEFAULT_DATA_DIR;
  let cfg: Config;
  try {
    cfg = completeConfig(applyFlags(mergeConfig(defaultConfig(dataDir), file), flags), file);
  } catch (e) {
    if (flags.ephemeral) rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  if (configFile) cfg.configFile = path.resolve(configFile);
  if (flags.ephemeral) cfg.ephemeral = true;
  if (flags.printKubeconfig) cfg.printKubeconfig = true;
  return cfg;
}

/**
 * --ephemeral, as flags: a new temporary data directory (the command removes it at exit), the memory
 * store, a free port and the Kubernetes names, each unless the command line says otherwise. A data
 * directory or another store, given anywhere, contradicts it.
 */
function ephemeralFlags(flags: ParsedFlags, file: FileConfig): void {
  if (flags.dataDir !== undefined || file.dataDir !== undefined) throw new Error('--ephemeral makes a temporary data directory of its own: give no --data-dir (nor dataDir in the file)');
  const store = flags.storageBackend ?? file.storage?.plugin;
  if (store !== undefined && store !== 'memory') throw new Error(`--ephemeral serves the memory store, not "${store}"`);
  flags.dataDir = mkdtempSync(path.join(os.tmpdir(), 'cluster-apiserver-'));
  flags.storageBackend = 'memory';
  flags.securePort ??= file.securePort ?? 0;
  flags.brand ??= file.brand ?? 'kubernetes';
}

/** Filled in from the final settings, checked (out-of-range flag values too), with its warnings. */
function completeConfig(cfg: Config, file: FileConfig): Config {
  fillTokenFile(cfg);
  fillServiceAccountKeys(cfg);
  fillServiceOptions(cfg);
  check(cfg, 'configuration');
  const warning = admissionWarning(file, defaultConfig(cfg.dataDir).admission);
  if (warning) cfg.warnings = [warning];
  return cfg;
}

/**
 * A configuration given as an object (the library's startServer): what a configuration file may
 * hold, checked as one is, over the defaults, with `fixed` (data directory, port, brand) on top.
 * Relative paths in it are taken from the working directory.
 */
export function configFromObject(given: FileConfig, fixed: Partial<Config> & { dataDir: string }): Config {
  check(given, 'configuration');
  checkAdmissionKeys(given, 'configuration');
  const file = { ...structuredClone(given), ...fixed };
  for (const k of ['dataDir', 'admissionConfigFile', 'encryptionProviderConfig'] as const) if (file[k] !== undefined) file[k] = path.resolve(file[k]);
  return completeConfig(mergeConfig(defaultConfig(file.dataDir), file), file);
}

/** Every plugin a configuration names, by kind, in the order the server creates them. */
export function configuredPlugins(cfg: Config): { kind: PluginKind; ref: PluginRef }[] {
  return [
    { kind: 'storage', ref: cfg.storage },
    { kind: 'flowcontrol', ref: cfg.flowControl },
    ...cfg.types.map((ref) => ({ kind: 'types' as const, ref })),
    ...cfg.authentication.map((ref) => ({ kind: 'authenticator' as const, ref })),
    ...cfg.authorization.map((ref) => ({ kind: 'authorizer' as const, ref })),
    ...cfg.admission.map((ref) => ({ kind: 'admission' as const, ref })),
    ...(cfg.audit ?? []).map((ref) => ({ kind: 'audit' as const, ref })),
    ...cfg.signers.map((ref) => ({ kind: 'signer' as const, ref })),
    ...cfg.controllers.map((ref) => ({ kind: 'controller' as const, ref })),
  ];
}

/** The bind address as a URL's host: the loopback for the unspecified address, bracketed IPv6. */
export function urlHost(bindAddress: string): string {
  return bindAddress === '0.0.0.0' ? '127.0.0.1' : bindAddress.includes(':') ? `[${bindAddress}]` : bindAddress;
}
