// Resolves a plugin specifier (built-in name, path, or npm package), imports it, checks that it
// fits this server (kind, contract version, host version range) and creates the instance.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CONTRACT_VERSION, type PluginHost, type PluginInstance, type PluginKind, type PluginModule } from '../contracts/index.js';
import type { PluginRef } from './config.js';

/** Contract versions this server can run (a future server may keep accepting older ones). */
export const SUPPORTED_CONTRACTS: readonly number[] = [CONTRACT_VERSION];

/** Directory of each kind's built-in plugins under plugins/. */
export const KIND_DIRS: Record<PluginKind, string> = {
  authenticator: 'authenticators',
  authorizer: 'authorizers',
  admission: 'admission',
  signer: 'signers',
  controller: 'controllers',
  storage: 'storage',
  types: 'types',
  audit: 'audit',
  flowcontrol: 'flowcontrol',
};

/** Methods an instance must have, so a broken plugin fails at start rather than on the first request. */
const REQUIRED_METHODS: Record<PluginKind, string[]> = {
  authenticator: ['authenticate'],
  authorizer: ['authorize'],
  admission: ['handles'],
  signer: ['sign'],
  controller: ['start', 'stop'],
  storage: ['open', 'close', 'currentRevision', 'compactedRevision', 'get', 'range', 'all', 'write', 'history', 'onCommit', 'compact'],
  types: ['types'],
  audit: ['level', 'record'],
  flowcontrol: ['admit'],
};

/** Version of this server package, checked against a plugin's `host` range. */
export const HOST_VERSION: string = (() => {
  // dist/kernel/host/ when compiled, kernel/host/ when run from source
  for (const rel of ['../../../package.json', '../../package.json']) {
    const file = fileURLToPath(new URL(rel, import.meta.url));
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'cluster-apiserver' && pkg.version) return pkg.version;
  }
  return '0.0.0';
})();

export interface LoadOptions {
  /** Directory of the config file: base of relative plugin paths and of npm package resolution. */
  configDir: string;
}

/** Load, check and create one plugin. Every failure names the specifier and kind. */
export async function loadPlugin<K extends PluginKind>(kind: K, ref: PluginRef, host: PluginHost, opts: LoadOptions): Promise<PluginInstance<K>> {
  const spec = ref.plugin;
  const fail = (msg: string, cause?: unknown) => new Error(`plugin "${spec}" (${kind}): ${msg}`, cause === undefined ? undefined : { cause });
  const file = resolvePlugin(kind, spec, opts.configDir, fail);

  let ns: Record<string, unknown>;
  try {
    ns = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw fail(`cannot import ${file}: ${(e as Error).message}`, e);
  }
  const mod = (ns.default ?? ns) as Partial<PluginModule>;
  if (typeof mod !== 'object' || mod === null) throw fail(`${file} does not export a plugin module`);
  if (mod.kind !== kind) throw fail(mod.kind === undefined ? `${file} declares no kind (expected "${kind}")` : `declares kind "${mod.kind}", expected "${kind}"`);
  if (typeof mod.contract !== 'number') throw fail(`declares no contract version (this server implements contract ${SUPPORTED_CONTRACTS.join(', ')})`);
  if (!SUPPORTED_CONTRACTS.includes(mod.contract)) {
    throw fail(`declares contract ${mod.contract}, this server implements contract ${SUPPORTED_CONTRACTS.join(', ')}`);
  }
  if (typeof mod.create !== 'function') throw fail('has no create() function');
  if (mod.host !== undefined) {
    let ok: boolean;
    try {
      ok = satisfies(HOST_VERSION, String(mod.host));
    } catch (e) {
      throw fail((e as Error).message);
    }
    if (!ok) throw fail(`requires cluster-apiserver "${mod.host}", this server is ${HOST_VERSION}`);
  }

  let inst: unknown;
  try {
    inst = await mod.create(ref.options ?? {}, host);
  } catch (e) {
    throw fail(`create() failed: ${(e as Error).message}`, e);
  }
  const missing = REQUIRED_METHODS[kind].filter((m) => typeof (inst as Record<string, unknown> | null)?.[m] !== 'function');
  if (missing.length) throw fail(`create() returned an object without ${missing.map((m) => m + '()').join(', ')}`);
  return inst as PluginInstance<K>;
}

/** Load a list of plugins of one kind, in order (order matters for authenticators, authorizers, admission). */
/**
 * Starts importing the modules of these plugins at once, without waiting: their files are read in
 * parallel while other start-up work runs, and loadPlugin later finds them loaded (in the order it
 * creates them, as before). A plugin that cannot be resolved or imported is left for loadPlugin to
 * report.
 */
export function preloadPlugins(refs: { kind: PluginKind; ref: PluginRef }[], configDir: string): void {
  for (const { kind, ref } of refs) {
    try {
      const file = resolvePlugin(kind, ref.plugin, configDir, (msg) => new Error(msg));
      import(pathToFileURL(file).href).catch(() => undefined);
    } catch { /* reported by loadPlugin */ }
  }
}

export async function loadAll<K extends PluginKind>(kind: K, refs: PluginRef[], host: PluginHost, opts: LoadOptions): Promise<PluginInstance<K>[]> {
  const out: PluginInstance<K>[] = [];
  for (const ref of refs) out.push(await loadPlugin(kind, ref, host, opts));
  return out;
}

// ---------------------------------------------------------------- resolution

function resolvePlugin(kind: PluginKind, spec: string, configDir: string, fail: (msg: string) => Error): string {
  // (2) a path, relative to the config file's directory
  if (spec.startsWith('.') || path.isAbsolute(spec)) {
    const p = path.resolve(configDir, spec);
    if (!existsSync(p)) throw fail(`not found: ${p}`);
    if (!statSync(p).isDirectory()) return p;
    try {
      return createRequire(import.meta.url).resolve(p); // a directory: its package.json "main" or index.js
    } catch {
      throw fail(`not found: no package.json "main" or index.js in ${p}`);
    }
  }
  // (1) a built-in plugin (names are plain words, so they cannot climb out of plugins/)
  const dir = KIND_DIRS[kind];
  if (/^[A-Za-z0-9][\w.-]*$/.test(spec)) {
    const builtin = fileURLToPath(new URL(`../../plugins/${dir}/${spec}/index.js`, import.meta.url));
    if (existsSync(builtin)) return builtin;
  }
  // (3) an npm package: next to the config file first, then this server's own node_modules
  const found = resolvePackage(spec, configDir) ?? resolvePackage(spec, path.dirname(fileURLToPath(import.meta.url)));
  if (found) return found;
  throw fail(`not found (looked for built-in plugins/${dir}/${spec}, and npm package "${spec}" from ${configDir})`);
}

function resolvePackage(spec: string, fromDir: string): string | undefined {
  try {
    return createRequire(path.join(fromDir, 'noop.js')).resolve(spec);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') return undefined;
  }
  // an ESM-only package (exports without a "require" condition): read its "exports" ourselves
  for (let d = fromDir; ; d = path.dirname(d)) {
    const pj = path.join(d, 'node_modules', spec, 'package.json');
    if (existsSync(pj)) {
      const entry = importEntry((JSON.parse(readFileSync(pj, 'utf8')) as { exports?: unknown }).exports);
      return entry ? path.join(path.dirname(pj), entry) : undefined;
    }
    if (path.dirname(d) === d) return undefined;
  }
}

function importEntry(exp: unknown): string | undefined {
  if (typeof exp === 'string') return exp;
  if (!exp || typeof exp !== 'object') return undefined;
  const o = exp as Record<string, unknown>;
  if ('.' in o) return importEntry(o['.']);
  for (const cond of ['import', 'node', 'default']) {
    const r = cond in o ? importEntry(o[cond]) : undefined;
    if (r) return r;
  }
  return undefined;
}

// ---------------------------------------------------------------- semver ranges (small subset)

type V = [number, number, number];

const cmp = (a: V, b: V): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

function parseVersion(s: string): V | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(s.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/**
 * Whether `version` satisfies `range`. Supports `*`, exact and partial versions (`1.2.3`, `1.2`, `1.x`),
 * comparators `>= > < <= =` joined by spaces (AND), `^` and `~`, and `||` alternatives. Pre-release tags are ignored.
 */
export function satisfies(version: string, range: string): boolean {
  const v = parseVersion(version);
  if (!v) throw new Error(`invalid version "${version}"`);
  return range.split('||').some((alt) => {
    const comps = alt.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return comps.every((c) => testComparator(v, c, range));
  });
}

function testComparator(v: V, c: string, range: string): boolean {
  if (c === '*' || c === 'x' || c === 'X') return true;
  const m = /^(>=|<=|>|<|=|\^|~)?v?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+][0-9A-Za-z.+-]*)?$/.exec(c);
  if (!m) throw new Error(`invalid version range "${range}"`);
  const op = m[1] ?? '';
  const digit = (s: string | undefined) => (s !== undefined && /^\d+$/.test(s) ? Number(s) : undefined);
  const [maj, min, pat] = [Number(m[2]), digit(m[3]), digit(m[4])];
  const lo: V = [maj, min ?? 0, pat ?? 0];
  const exact = pat !== undefined && min !== undefined;
  // upper bound (exclusive) of a partial version: 1 → 2.0.0, 1.2 → 1.3.0
  const partialHi: V = min === undefined ? [maj + 1, 0, 0] : [maj, min + 1, 0];
  switch (op) {
    case '':
    case '=':
      return exact ? cmp(v, lo) === 0 : cmp(v, lo) >= 0 && cmp(v, partialHi) < 0;
    case '>=': return cmp(v, lo) >= 0;
    case '>': return exact ? cmp(v, lo) > 0 : cmp(v, partialHi) >= 0;
    case '<': return cmp(v, lo) < 0;
    case '<=': return exact ? cmp(v, lo) <= 0 : cmp(v, partialHi) < 0;
    case '~': return cmp(v, lo) >= 0 && cmp(v, partialHi) < 0;
    case '^': {
      // the left-most non-zero part may not change
      const hi: V = maj > 0 || min === undefined ? [maj + 1, 0, 0] : min > 0 || pat === undefined ? [0, min + 1, 0] : [0, 0, pat + 1];
      return cmp(v, lo) >= 0 && cmp(v, hi) < 0;
    }
  }
  return false;
}
