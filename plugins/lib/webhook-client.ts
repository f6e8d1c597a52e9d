// What every outgoing webhook of a plugin needs (token review, authorization, admission image
// policy): reading a kubeconfig-format client file, and one bounded JSON POST over HTTPS.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import YAML from 'yaml';

export interface WebhookClient {
  url: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  servername?: string;
  insecure: boolean;
}

type Entry = Record<string, unknown>;

/** The current context's cluster and user of a kubeconfig-format file (or the first of each); `what` names the file in errors. */
export function readClientConfig(file: string, what: string): WebhookClient {
  const fail = (msg: string) => new Error(`${what} ${file}: ${msg}`);
  let doc: Entry;
  try {
    doc = (YAML.parse(readFileSync(file, 'utf8')) ?? {}) as Entry;
  } catch (e) {
    throw fail((e as Error).message);
  }
  for (const k of ['clusters', 'users', 'contexts']) if (doc[k] !== undefined && !Array.isArray(doc[k])) throw fail('clusters, users and contexts must be lists');
  const named = (k: string) => (Array.isArray(doc[k]) ? (doc[k] as Entry[]) : []);
  const ctx = named('contexts').find((c) => c.name === doc['current-context'])?.context as Entry | undefined;
  const pick = (k: string, inner: string, want: unknown) => ((ctx ? named(k).find((c) => c.name === want) : named(k)[0])?.[inner] ?? undefined) as Entry | undefined;
  const cluster = pick('clusters', 'cluster', ctx?.cluster);
  const user = pick('users', 'user', ctx?.user) ?? {};
  if (!cluster) throw fail('no cluster entry');
  if (typeof cluster.server !== 'string') throw fail('cluster has no server');
  let url: URL;
  try { url = new URL(cluster.server); } catch { throw fail(`server "${cluster.server}" is not a URL`); }
  if (url.protocol !== 'https:') throw fail(`server must be an https URL, got "${cluster.server}"`);
  const dir = path.dirname(file);
  // <name>-data holds base64 inline; <name> names a file relative to the config file
  const material = (e: Entry, name: string): Buffer | undefined => {
    const data = e[`${name}-data`];
    if (typeof data === 'string' && data) return Buffer.from(data, 'base64');
    const f = e[name];
    if (typeof f !== 'string' || !f) return undefined;
    try { return readFileSync(path.resolve(dir, f)); } catch (err) { throw fail(`${name}: ${(err as Error).message}`); }
  };
  const c: WebhookClient = {
    url,
    ca: material(cluster, 'certificate-authority'),
    cert: material(user, 'client-certificate'),
    key: material(user, 'client-key'),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    servername: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
  };
  if (!!c.cert !== !!c.key) throw fail('client-certificate and client-key go together');
  if (typeof user.token === 'string' && user.token) c.token = user.token;
  else if (typeof user.tokenFile === 'string' && user.tokenFile) c.token = readFileSync(path.resolve(dir, user.tokenFile), 'utf8').trim();
  return c;
}

/** POSTs a JSON body and resolves the parsed JSON answer; rejects on transport errors, timeouts, non-2xx statuses, oversize or non-JSON answers. */
export function postJSON(c: WebhookClient, agent: https.Agent, body: string, o: { timeoutMs: number; maxBytes: number }): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    if (c.token) headers.authorization = `Bearer ${c.token}`;
    const req = https.request(c.url, {
      method: 'POST', headers, agent, timeout: o.timeoutMs,
      ca: c.ca, cert: c.cert, key: c.key, servername: c.servername, rejectUnauthorized: !c.insecure,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (d: Buffer) => {
        size += d.length;
        if (size > o.maxBytes) req.destroy(new Error(`response larger than ${o.maxBytes} bytes`));
        else chunks.push(d);
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299) return reject(new Error(`HTTP ${code}${text ? `: ${text.slice(0, 200)}` : ''}`));
        try { resolve(JSON.parse(text)); } catch { reject(new Error('the answer is not JSON')); }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${o.timeoutMs / 1000}s`)));
    req.on('error', reject);
    req.end(body);
  });
}
