// Helpers for the workload controller tests: a server with some of the built-in workload
// controllers switched on, and the kubelet's part played by hand (pod status through pods/status).
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../../kernel/ops/config.js';
import { withServer, type StartOptions, type TestServer } from './server.js';
import { until } from './poll.js';

/** A server running the default controllers plus the named workload controllers. */
export async function withWorkloadControllers(t: { teardown(fn: () => unknown): void }, names: string[], opts: StartOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-wl-'));
  const file = path.join(dir, 'config.json');
  writeFileSync(file, JSON.stringify({ controllers: [...defaultConfig().controllers, ...names.map((plugin) => ({ plugin }))] }));
  return withServer(t, { ...opts, args: [...(opts.args ?? []), '--config', file] });
}

export const podTemplate = (labels: Record<string, string>, image = 'nginx', extra: Record<string, unknown> = {}) => ({
  metadata: { labels }, spec: { containers: [{ name: 'c', image }], ...extra },
});

const ns = (namespace: string) => `/api/v1/namespaces/${namespace}/pods`;

/** The pods of a namespace whose labels include `labels`, not being deleted. */
export async function podsWith(s: TestServer, labels: Record<string, string>, namespace = 'default'): Promise<any[]> {
  const sel = Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');
  const r = await s.get(`${ns(namespace)}?labelSelector=${encodeURIComponent(sel)}`);
  if (r.status !== 200) throw new Error(`list pods: ${r.status} ${r.text}`);
  return r.json.items.filter((p: any) => !p.metadata.deletionTimestamp);
}

/** Waits until exactly `n` such pods exist, and returns them. */
export async function waitPods(s: TestServer, labels: Record<string, string>, n: number, namespace = 'default'): Promise<any[]> {
  return until(() => podsWith(s, labels, namespace), (ps) => ps.length === n);
}

/** Plays the kubelet: the pod is Running (ready or not), or finished in a phase, through pods/status; `extra` adds status fields (podIP). */
export async function setPodPhase(s: TestServer, pod: any, phase: 'Running' | 'Succeeded' | 'Failed', ready = phase === 'Running', extra: Record<string, unknown> = {}): Promise<any> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const cond = (type: string, status: boolean) => ({ type, status: status ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: now });
  const finished = phase !== 'Running';
  const containerStatuses = pod.spec.containers.map((c: any) => ({
    name: c.name, image: c.image, imageID: '', ready, restartCount: 0, started: !finished,
    state: finished ? { terminated: { exitCode: phase === 'Succeeded' ? 0 : 1, reason: phase === 'Succeeded' ? 'Completed' : 'Error', startedAt: now, finishedAt: now } } : { running: { startedAt: now } },
  }));
  for (;;) {
    const cur = (await s.get(`${ns(pod.metadata.namespace)}/${pod.metadata.name}`)).json;
    const status = { ...cur.status, ...extra, phase, startTime: now, conditions: [cond('Initialized', true), cond('Ready', ready), cond('ContainersReady', ready), cond('PodScheduled', true)], containerStatuses };
    const r = await s.request('PUT', `${ns(pod.metadata.namespace)}/${pod.metadata.name}/status`, { body: { ...cur, status } });
    if (r.status === 200) return r.json;
    if (r.status !== 409) throw new Error(`pod status: ${r.status} ${r.text}`);
  }
}

/** GET that must answer 200. */
export async function getOk(s: TestServer, p: string): Promise<any> {
  const r = await s.get(p);
  if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.text}`);
  return r.json;
}

/** POST that must answer 201. */
export async function createOk(s: TestServer, p: string, body: unknown): Promise<any> {
  const r = await s.request('POST', p, { body });
  if (r.status !== 201) throw new Error(`POST ${p}: ${r.status} ${r.text}`);
  return r.json;
}

/** Waits until GET of `p` satisfies `ok`; returns the last object read. */
export const waitFor = (s: TestServer, p: string, ok: (o: any) => boolean): Promise<any> => until(() => s.get(p).then((r) => r.json), (o) => !!o && ok(o));
