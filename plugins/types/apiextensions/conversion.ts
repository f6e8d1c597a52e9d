// Conversion between the versions of a custom resource: `None` rewrites apiVersion only; `Webhook`
// sends a ConversionReview to the definition's webhook (URL or service, verified against caBundle)
// and checks its answer as the reference does: same uid, one object per object sent, each in the
// desired version, and nothing of metadata changed but labels and annotations.
import { randomUUID } from 'node:crypto';
import type { Brand } from '../../../kernel/contracts/brand.js';
import type { KObject } from '../../../kernel/contracts/index.js';
import { StatusError } from '../../../kernel/contracts/status.js';
import type { ClientConfig } from '../../admission/webhook-common/config.js';
import { isObj } from '../../lib/json.js';

type J = Record<string, any>;

/** Sends a ConversionReview body to a webhook and returns the parsed answer (throws with the transport's reason). */
export type WebhookCall = (cc: ClientConfig, body: string, timeoutSeconds: number) => Promise<unknown>;

export type Converter = (objs: KObject[], version: string) => Promise<KObject[]>;

export function converterFor(crd: KObject, brand: Brand, call: WebhookCall | undefined): Converter {
  const spec = (crd.spec ?? {}) as J;
  const group = String(spec.group ?? '');
  const kind = String(spec.names?.kind ?? '');
  const conv = isObj(spec.conversion) ? spec.conversion : { strategy: 'None' };
  if (conv.strategy !== 'Webhook') {
    return async (objs, version) => objs.map((o) => ({ ...o, apiVersion: `${group}/${version}` }));
  }
  const wh = isObj(conv.webhook) ? conv.webhook : {};
  const ccRaw = isObj(wh.clientConfig) ? wh.clientConfig : {};
  const cc: ClientConfig = { url: typeof ccRaw.url === 'string' ? ccRaw.url : undefined };
  if (isObj(ccRaw.service)) cc.service = { namespace: String(ccRaw.service.namespace ?? ''), name: String(ccRaw.service.name ?? ''), path: String(ccRaw.service.path ?? '/'), port: Number(ccRaw.service.port ?? 443) };
  if (typeof ccRaw.caBundle === 'string' && ccRaw.caBundle) cc.ca = Buffer.from(ccRaw.caBundle, 'base64').toString('utf8');
  const reviewVersion = (Array.isArray(wh.conversionReviewVersions) ? wh.conversionReviewVersions : []).find((v: unknown) => v === 'v1' || v === 'v1beta1') ?? 'v1';
  return async (objs, version) => {
    const desired = `${group}/${version}`;
    const todo = objs.filter((o) => o.apiVersion !== desired);
    if (!todo.length) return objs;
    const from = todo[0].apiVersion ?? '';
    const fail = (msg: string) => new StatusError(500, 'InternalError', `conversion webhook for ${from}, Kind=${kind} failed: ${msg}`);
    if (!call) throw fail('no webhook client');
    const uid = randomUUID();
    const body = JSON.stringify({ apiVersion: `apiextensions.${brand.domain}/${reviewVersion}`, kind: 'ConversionReview', request: { uid, desiredAPIVersion: desired, objects: todo } });
    let answer: unknown;
    try { answer = await call(cc, body, 30); } catch (e) { throw fail((e as Error).message); }
    const res = isObj(answer) && isObj(answer.response) ? answer.response : undefined;
    if (!res) throw fail('the webhook response has no "response"');
    if (res.uid !== uid) throw fail(`expected response uid ${JSON.stringify(uid)}, got ${JSON.stringify(res.uid)}`);
    if (res.result?.status !== 'Success') throw fail(String(res.result?.message ?? 'the webhook did not report success'));
    const out = Array.isArray(res.convertedObjects) ? res.convertedObjects : [];
    if (out.length !== todo.length) throw fail(`returned ${out.length} objects, expected ${todo.length}`);
    const converted = new Map<KObject, KObject>();
    todo.forEach((orig, i) => {
      const o = out[i];
      if (!isObj(o) || o.apiVersion !== desired) throw fail(`invalid converted object at index ${i}: invalid apiVersion ${JSON.stringify(isObj(o) ? o.apiVersion : undefined)}, expected ${JSON.stringify(desired)}`);
      if (o.kind !== orig.kind) throw fail(`invalid converted object at index ${i}: invalid kind ${JSON.stringify(o.kind)}`);
      // Only labels and annotations may change in metadata; everything else is the stored object's.
      const md = isObj(o.metadata) ? o.metadata : {};
      o.metadata = { ...orig.metadata, labels: md.labels ?? orig.metadata?.labels, annotations: md.annotations ?? orig.metadata?.annotations };
      if (o.metadata.labels === undefined) delete o.metadata.labels;
      if (o.metadata.annotations === undefined) delete o.metadata.annotations;
      converted.set(orig, o as KObject);
    });
    return objs.map((o) => converted.get(o) ?? o);
  };
}
