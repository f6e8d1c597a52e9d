// Encryption at rest from the reference's EncryptionConfiguration (--encryption-provider-config):
// per resource, an ordered list of providers; the first one encrypts every write, all of them read.
// Stored values carry the reference's prefix `k8s:enc:<provider>:v1:<key name>:` so the reader knows
// which provider and key wrote them; identity stores (and reads) plain values.
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import YAML from 'yaml';
import type { ValueTransformer } from '../contracts/index.js';

const ENC = Buffer.from('k8s:enc:');

type ProviderType = 'aescbc' | 'aesgcm' | 'secretbox' | 'identity';

interface Key { name: string; secret: Buffer; prefix: Buffer }
interface Provider { type: ProviderType; keys: Key[] }

/** What each provider does with one key; AAD (the storage key) binds a GCM value to where it is stored. */
const CIPHERS: Record<Exclude<ProviderType, 'identity'>, {
  keySizes: number[];
  seal(key: Buffer, plain: Uint8Array, aad: Buffer): Buffer;
  open(key: Buffer, sealed: Buffer, aad: Buffer): Buffer;
}> = {
  aescbc: {
    keySizes: [16, 24, 32],
    seal(key, plain) {
      const iv = randomBytes(16);
      const c = createCipheriv(`aes-${key.length * 8}-cbc`, key, iv);
      return Buffer.concat([iv, c.update(plain), c.final()]);
    },
    open(key, sealed) {
      if (sealed.length < 32 || sealed.length % 16) throw new Error('the data is not a whole number of AES blocks');
      const d = createDecipheriv(`aes-${key.length * 8}-cbc`, key, sealed.subarray(0, 16));
      return Buffer.concat([d.update(sealed.subarray(16)), d.final()]);
    },
  },
  aesgcm: {
    keySizes: [16, 24, 32],
    seal(key, plain, aad) {
      const nonce = randomBytes(12);
      const c = createCipheriv(`aes-${key.length * 8}-gcm` as CipherGCMTypes, key, nonce);
      c.setAAD(aad);
      return Buffer.concat([nonce, c.update(plain), c.final(), c.getAuthTag()]);
    },
    open(key, sealed, aad) {
      if (sealed.length < 28) throw new Error('the data is too short');
      const d = createDecipheriv(`aes-${key.length * 8}-gcm` as CipherGCMTypes, key, sealed.subarray(0, 12));
      d.setAAD(aad);
      d.setAuthTag(sealed.subarray(sealed.length - 16));
      return Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
    },
  },
  // XSalsa20-Poly1305 (NaCl secretbox): node:crypto has no XSalsa20, @noble/ciphers (audited) does.
  secretbox: {
    keySizes: [32],
    seal(key, plain) {
      const nonce = randomBytes(24);
      return Buffer.concat([nonce, xsalsa20poly1305(key, nonce).encrypt(plain)]);
    },
    open(key, sealed) {
      if (sealed.length < 40) throw new Error('the data is too short');
      return Buffer.from(xsalsa20poly1305(key, sealed.subarray(0, 24)).decrypt(sealed.subarray(24)));
    },
  },
};

/** One `resources` entry: which group/resources it covers, and its providers. */
interface Rule { match: (group: string, resource: string) => boolean; providers: Provider[] }

export class EncryptionTransformer implements ValueTransformer {
  /** The providers for a storage key's "/group/resource/" prefix (undefined: not encrypted), memoized. */
  private byPrefix = new Map<string, Provider[] | undefined>();

  constructor(private rules: Rule[]) {}

  private providers(key: string): Provider[] | undefined {
    const end = key.indexOf('/', key.indexOf('/', 1) + 1);
    const prefix = key.slice(0, end + 1);
    if (this.byPrefix.has(prefix)) return this.byPrefix.get(prefix);
    const [group, resource] = prefix.split('/').slice(1, 3);
    const found = this.rules.find((r) => r.match(group === 'core' ? '' : group, resource))?.providers;
    this.byPrefix.set(prefix, found);
    return found;
  }

  toStorage(key: string, value: Uint8Array): Uint8Array {
    const p = this.providers(key)?.[0];
    if (!p || p.type === 'identity') return value;
    const k = p.keys[0];
    return Buffer.concat([k.prefix, CIPHERS[p.type].seal(k.secret, value, Buffer.from(key))]);
  }

  fromStorage(key: string, stored: Uint8Array): Uint8Array {
    const buf = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
    const providers = this.providers(key);
    if (!buf.subarray(0, ENC.length).equals(ENC)) {
      // A plain value: readable only where identity is configured (or nothing is), as in the reference.
      if (!providers || providers.some((p) => p.type === 'identity')) return stored;
      throw new Error(`cannot read ${key}: it is stored unencrypted and the encryption configuration has no identity provider for it (no matching prefix found)`);
    }
    for (const p of providers ?? []) {
      if (p.type === 'identity') continue;
      for (const k of p.keys) {
        if (!buf.subarray(0, k.prefix.length).equals(k.prefix)) continue;
        try {
          return CIPHERS[p.type].open(k.secret, buf.subarray(k.prefix.length), Buffer.from(key));
        } catch (e) {
          throw new Error(`cannot decrypt ${key} with ${p.type} key "${k.name}": ${(e as Error).message}`);
        }
      }
    }
    const head = buf.subarray(0, Math.min(buf.length, 64)).toString('latin1');
    const prefix = /^k8s:enc:[^:]*:v1:[^:]*:/.exec(head)?.[0] ?? 'k8s:enc:';
    throw new Error(`cannot decrypt ${key}: no configured provider and key match its prefix "${prefix}"`);
  }
}

// ---------------------------------------------------------------- the configuration file

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** "secrets", "deployments.apps", "*.apps", "*." (the core group), "*.*" (everything). */
function matcher(entry: string, where: string): (group: string, resource: string) => boolean {
  if (entry === '*.*') return () => true;
  const dot = entry.indexOf('.');
  const resource = dot < 0 ? entry : entry.slice(0, dot);
  const group = dot < 0 ? '' : entry.slice(dot + 1);
  if (!resource || (resource === '*' && dot < 0)) throw new Error(`${where}: "${entry}" is not a resource (examples: secrets, deployments.apps, *.apps, *.*)`);
  if (resource === '*') return (g) => g === group;
  return (g, r) => g === group && r === resource;
}

function parseProvider(p: unknown, where: string): Provider {
  if (!isObj(p) || Object.keys(p).length !== 1) throw new Error(`${where}: each provider names exactly one of aescbc, aesgcm, secretbox, identity`);
  const type = Object.keys(p)[0];
  if (type === 'kms') throw new Error(`${where}: the kms provider is not supported by this server (aescbc, aesgcm, secretbox, identity are)`);
  if (type === 'identity') return { type, keys: [] };
  if (type !== 'aescbc' && type !== 'aesgcm' && type !== 'secretbox') throw new Error(`${where}: unknown provider "${type}" (aescbc, aesgcm, secretbox, identity)`);
  const keys = (p[type] as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || !keys.length) throw new Error(`${where}.${type}.keys: at least one key is required`);
  const names = new Set<string>();
  return {
    type,
    keys: keys.map((k, j) => {
      const kw = `${where}.${type}.keys[${j}]`;
      if (!isObj(k) || typeof k.name !== 'string' || !k.name) throw new Error(`${kw}.name: required`);
      if (k.name.includes(':')) throw new Error(`${kw}.name: must not contain ":"`);
      if (names.has(k.name)) throw new Error(`${kw}.name: duplicate key name "${k.name}"`);
      names.add(k.name);
      if (typeof k.secret !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(k.secret)) throw new Error(`${kw}.secret: must be base64`);
      const secret = Buffer.from(k.secret, 'base64');
      const sizes = CIPHERS[type].keySizes;
      if (!sizes.includes(secret.length)) throw new Error(`${kw}.secret: a ${type} key is ${sizes.join(', ')} bytes, not ${secret.length}`);
      return { name: k.name, secret, prefix: Buffer.from(`k8s:enc:${type}:v1:${k.name}:`) };
    }),
  };
}

/** Parses an EncryptionConfiguration; errors name the file and the field. */
export function parseEncryptionConfig(text: string, file: string): EncryptionTransformer {
  let doc: unknown;
  try {
    doc = YAML.parse(text, { maxAliasCount: 0 });
  } catch (e) {
    throw new Error(`encryption provider config ${file}: cannot parse: ${(e as Error).message}`);
  }
  const fail = (msg: string): never => { throw new Error(`encryption provider config ${file}: ${msg}`); };
  if (!isObj(doc)) return fail('not an object');
  if (doc.kind !== 'EncryptionConfiguration') fail(`kind must be EncryptionConfiguration, not ${JSON.stringify(doc.kind)}`);
  if (doc.apiVersion !== 'apiserver.config.k8s.io/v1') fail(`apiVersion must be apiserver.config.k8s.io/v1, not ${JSON.stringify(doc.apiVersion)}`);
  if (!Array.isArray(doc.resources) || !doc.resources.length) fail('resources: at least one entry is required');
  const seen = new Set<string>();
  const rules = (doc.resources as unknown[]).map((r, i): Rule => {
    const where = `resources[${i}]`;
    if (!isObj(r) || !Array.isArray(r.resources) || !r.resources.length) return fail(`${where}.resources: at least one resource is required`);
    if (!Array.isArray(r.providers) || !r.providers.length) return fail(`${where}.providers: at least one provider is required`);
    const matchers = r.resources.map((e, j) => {
      if (typeof e !== 'string') return fail(`${where}.resources[${j}]: must be a string`);
      if (seen.has(e)) fail(`${where}.resources[${j}]: "${e}" is listed more than once`);
      seen.add(e);
      try { return matcher(e, `${where}.resources[${j}]`); } catch (err) { return fail((err as Error).message); }
    });
    let providers: Provider[];
    try { providers = r.providers.map((p, j) => parseProvider(p, `${where}.providers[${j}]`)); } catch (err) { return fail((err as Error).message); }
    return { match: (g, res) => matchers.some((m) => m(g, res)), providers };
  });
  return new EncryptionTransformer(rules);
}

export async function loadEncryptionConfig(file: string): Promise<EncryptionTransformer> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new Error(`encryption provider config ${file}: ${(e as Error).message}`);
  }
  return parseEncryptionConfig(text, file);
}
