// Sends the corpus's probes to a server (the reference, to record its verdicts; ours, to replay
// them) and collects each answer's verdict: status code, reason and each cause's field and type.
// Creates are dry runs; an update probe's seed is created for real, its probes sent as dry-run
// updates of what the server stores, and the seed deleted again, so no seed affects another's probes.
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { applyProbe, seedName, seedObject, type Probe } from './generate.js';
import { PROTOBUF, protobufBody } from './protobuf.js';

export interface Target { url: string; token: string; ca: Buffer | string }

export interface Verdict {
  code: number;
  reason?: string;
  /** [field, type] of each cause, sorted. */
  causes?: [string, string][];
  /** The message, cut to 300 characters (read by people; not compared). */
  message?: string;
}

export const PROBE_NAMESPACE = 'probes';

interface Answer { status: number; body: any }

function client(target: Target) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ca: target.ca });
  const base = new URL(target.url);
  const request = (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer> => new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    const req = https.request({
      agent, host: base.hostname, port: base.port, method, path,
      headers: { authorization: `Bearer ${target.token}`, accept: 'application/json', ...(data ? { 'content-type': contentType, 'content-length': data.length } : {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = { message: text }; }
        resolve({ status: res.statusCode ?? 0, body: json });
      });
      res.on('error', reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
    req.on('error', reject);
    req.end(data);
  });
  return { request, close: () => agent.destroy() };
}

/** A probe's body and its content type, in the probe's encoding (a Buffer for Protobuf). */
function encoded(p: Probe, obj: Record<string, any>): [body: unknown, contentType: string] {
  if (p.encoding !== 'protobuf') return [obj, 'application/json'];
  const body = protobufBody(obj);
  if (!body) throw new Error(`${p.id}: the body cannot be encoded in Protobuf`);
  return [body, PROTOBUF];
}

export function verdictOf(a: Answer): Verdict {
  const v: Verdict = { code: a.status };
  if (a.status >= 300 && a.body && typeof a.body === 'object') {
    if (a.body.reason) v.reason = String(a.body.reason);
    const causes = Array.isArray(a.body.details?.causes) ? a.body.details.causes : [];
    if (causes.length) v.causes = causes.map((c: any) => [String(c.field ?? ''), String(c.reason ?? '')] as [string, string]).sort((x: [string, string], y: [string, string]) => (x[0] + '\0' + x[1] < y[0] + '\0' + y[1] ? -1 : x[0] + '\0' + x[1] > y[0] + '\0' + y[1] ? 1 : 0));
    if (typeof a.body.message === 'string') v.message = a.body.message.slice(0, 300);
  }
  return v;
}

/** Whether two verdicts agree: the same code, reason and causes (messages are not compared). */
export function sameVerdict(a: Verdict, b: Verdict): boolean {
  return a.code === b.code && (a.reason ?? '') === (b.reason ?? '') && JSON.stringify(a.causes ?? []) === JSON.stringify(b.causes ?? []);
}

const collection = (p: Probe) => p.seed.path.replace('{ns}', PROBE_NAMESPACE);

/** What every run needs first: the probe namespace and its default service account (no controller makes it on a bare reference). */
async function setup(request: ReturnType<typeof client>['request']): Promise<void> {
  await request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PROBE_NAMESPACE } });
  await request('POST', `/api/v1/namespaces/${PROBE_NAMESPACE}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
}

/** Deletes a stored seed at once: no finalizer left for a controller the server may not run, no grace period. */
async function remove(request: ReturnType<typeof client>['request'], item: string): Promise<void> {
  await request('PATCH', item, { metadata: { finalizers: null } }, 'application/merge-patch+json');
  await request('DELETE', `${item}?gracePeriodSeconds=0&propagationPolicy=Background`);
}

/** Runs `jobs` with at most `n` in flight. */
async function pool<T>(items: T[], n: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) await job(items[next++]!);
  }));
}

/**
 * Sends every probe and returns its verdict by probe id. `onProgress` hears how many are done.
 * Probes of one seed's updates run in sequence around its real object; creates run `concurrency` at a time.
 */
export async function runProbes(target: Target, probes: Probe[], opts: { concurrency?: number; onProgress?: (done: number) => void } = {}): Promise<Map<string, Verdict>> {
  const { request, close } = client(target);
  const out = new Map<string, Verdict>();
  const concurrency = opts.concurrency ?? 4;
  let done = 0;
  const record = (p: Probe, v: Verdict) => { out.set(p.id, v); if (++done % 1000 === 0) opts.onProgress?.(done); };
  try {
    await setup(request);
    const creates = probes.filter((p) => p.op === 'create');
    await pool(creates, concurrency, async (p) => {
      const [body, type] = encoded(p, applyProbe(seedObject(p.seed, 'create'), p));
      record(p, verdictOf(await request('POST', `${collection(p)}?dryRun=All`, body, type)));
    });
    // Updates, seed by seed.
    const bySeed = new Map<string, Probe[]>();
    for (const p of probes) if (p.op === 'update') bySeed.set(p.seed.name, [...(bySeed.get(p.seed.name) ?? []), p]);
    const run = randomBytes(3).toString('hex');
    for (const group of bySeed.values()) {
      const seed = group[0]!.seed;
      const item = `${collection(group[0]!)}/${seedName(seed, 'update', run)}`;
      await remove(request, item);
      const made = await request('POST', collection(group[0]!), seedObject(seed, 'update', run));
      await pool(group, concurrency, async (p) => {
        // A seed the server refused: each of its update probes gets that refusal as its verdict.
        if (made.status !== 201) return record(p, { ...verdictOf(made), message: `seed not created: ${verdictOf(made).message ?? ''}`.slice(0, 300) });
        // Controllers write the stored object too (status, annotations): each probe starts from what
        // is stored now, and a conflict with such a write is tried again, so the verdict is the probe's own.
        let answer: Answer | undefined;
        for (let attempt = 0; attempt < 5; attempt++) {
          const stored = (await request('GET', item)).body;
          const [body, type] = encoded(p, applyProbe(stored, p));
          answer = await request('PUT', `${item}?dryRun=All`, body, type);
          if (!(answer.status === 409 && /the object has been modified/.test(String(answer.body?.message)))) break;
        }
        record(p, verdictOf(answer!));
      });
      await remove(request, item);
    }
  } finally {
    close();
  }
  return out;
}
