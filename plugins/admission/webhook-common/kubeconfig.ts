// Client configuration files (kubeconfig format) for calling webhooks: the credentials file an
// AdmissionConfiguration names for the webhook plugins (`kubeConfigFile`), and the ImagePolicyWebhook
// backend's configuration. Entries of the webhook credentials file are keyed by the user entry's name:
// a service's DNS name (`<svc>.<ns>.svc`, with `:<port>` when the port is not 443) or a URL's
// `host[:port]`, optionally starting with a `*.` wildcard; `*` is the default.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

/** What a call presents: a bearer token, basic credentials, or a client certificate. */
export interface Credentials {
  token?: string;
  username?: string;
  password?: string;
  cert?: string;
  key?: string;
}

export interface ClusterEntry {
  server: string;
  /** PEM CA bundle; undefined means the host's roots. */
  ca?: string;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
}

export interface Kubeconfig {
  file: string;
  clusters: Map<string, ClusterEntry>;
  users: Map<string, Credentials>;
  contexts: Map<string, { cluster: string; user: string }>;
  currentContext: string;
}

type J = Record<string, any>;

function readData(dir: string, data: unknown, file: unknown, what: string): string | undefined {
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
  if (typeof file === 'string' && file) {
    try {
      return readFileSync(path.resolve(dir, file), 'utf8');
    } catch (e) {
      throw new Error(`${what}: ${(e as Error).message}`);
    }
  }
  return undefined;
}

/** Reads and checks a kubeconfig file; relative file references are relative to it. */
export function loadKubeconfig(file: string): Kubeconfig {
  let doc: J;
  try {
    doc = (YAML.parse(readFileSync(file, 'utf8')) ?? {}) as J;
  } catch (e) {
    throw new Error(`kubeconfig ${file}: ${(e as Error).message}`);
  }
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`kubeconfig ${file}: not a client configuration`);
  const dir = path.dirname(file);
  const kc: Kubeconfig = { file, clusters: new Map(), users: new Map(), contexts: new Map(), currentContext: typeof doc['current-context'] === 'string' ? doc['current-context'] : '' };
  for (const c of Array.isArray(doc.clusters) ? doc.clusters : []) {
    if (!c || typeof c.name !== 'string') continue;
    const cl = (c.cluster ?? {}) as J;
    kc.clusters.set(c.name, {
      server: String(cl.server ?? ''),
      ca: readData(dir, cl['certificate-authority-data'], cl['certificate-authority'], `kubeconfig ${file}: cluster ${c.name}`),
      insecureSkipTLSVerify: cl['insecure-skip-tls-verify'] === true,
      tlsServerName: typeof cl['tls-server-name'] === 'string' ? cl['tls-server-name'] : undefined,
    });
  }
  for (const u of Array.isArray(doc.users) ? doc.users : []) {
    if (!u || typeof u.name !== 'string') continue;
    const us = (u.user ?? {}) as J;
    const where = `kubeconfig ${file}: user ${u.name}`;
    const cred: Credentials = {};
    let token = typeof us.token === 'string' && us.token ? us.token : undefined;
    if (!token && typeof us.tokenFile === 'string' && us.tokenFile) token = readData(dir, undefined, us.tokenFile, where)?.trim();
    if (token) cred.token = token;
    if (typeof us.username === 'string' && us.username) {
      cred.username = us.username;
      cred.password = typeof us.password === 'string' ? us.password : '';
    }
    const cert = readData(dir, us['client-certificate-data'], us['client-certificate'], where);
    const key = readData(dir, us['client-key-data'], us['client-key'], where);
    if ((cert === undefined) !== (key === undefined)) throw new Error(`${where}: a client certificate needs its key, and a key its certificate`);
    if (cert && key) Object.assign(cred, { cert, key });
    kc.users.set(u.name, cred);
  }
  for (const c of Array.isArray(doc.contexts) ? doc.contexts : []) {
    if (!c || typeof c.name !== 'string') continue;
    kc.contexts.set(c.name, { cluster: String(c.context?.cluster ?? ''), user: String(c.context?.user ?? '') });
  }
  return kc;
}

/**
 * Credentials for a webhook target, as the reference resolves them: the exact name, then `*.`
 * wildcards from the most specific, then (for an explicit :443) the same without the port, then `*`,
 * then the current context's user; none means an anonymous call.
 */
export function credentialsFor(kc: Kubeconfig | undefined, target: string): Credentials | undefined {
  if (!kc) return undefined;
  const lookup = (t: string): Credentials | undefined => {
    const exact = kc.users.get(t);
    if (exact) return exact;
    const steps = t.split('.');
    for (let i = 1; i < steps.length; i++) {
      const hit = kc.users.get('*.' + steps.slice(i).join('.'));
      if (hit) return hit;
    }
    return undefined;
  };
  const found = lookup(target) ?? (target.endsWith(':443') ? lookup(target.slice(0, -4)) : undefined);
  if (found) return found;
  const star = kc.users.get('*');
  if (star) return star;
  const ctx = kc.contexts.get(kc.currentContext);
  return ctx ? kc.users.get(ctx.user) : undefined;
}

/** The cluster and user of the current context (or the first ones): the ImagePolicyWebhook backend. */
export function currentTarget(kc: Kubeconfig): { cluster: ClusterEntry; user: Credentials } {
  const ctx = kc.contexts.get(kc.currentContext) ?? [...kc.contexts.values()][0];
  const cluster = (ctx && kc.clusters.get(ctx.cluster)) ?? [...kc.clusters.values()][0];
  if (!cluster || !cluster.server) throw new Error(`kubeconfig ${kc.file}: no cluster with a server`);
  const user = (ctx && kc.users.get(ctx.user)) ?? [...kc.users.values()][0] ?? {};
  return { cluster, user };
}
