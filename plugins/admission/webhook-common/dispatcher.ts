// Calling the admission webhooks of one kind. Mutating webhooks run one after another, each seeing
// the object as the previous ones left it; their JSON patches are applied to the object in place.
// Validating webhooks run in parallel and any denial rejects the request. Errors and timeouts follow
// each webhook's failurePolicy; denials carry the webhook's status code and message.
import { performance } from 'node:perf_hooks';
import type { AdmissionAttributes, Operation, PluginHost } from '../../../kernel/contracts/index.js';
import { errors, StatusError } from '../../../kernel/contracts/status.js';
import { deepEqual } from '../../../workers/merge/schema.js';
import { jsonPatch } from '../../../workers/merge/json-patch.js';
import { depthError } from '../../../workers/body/decode.js';
import { CallError, WebhookClient } from './client.js';
import { isWebhookConfigurationResource, WebhookSource, type Webhook } from './config.js';
import type { Kubeconfig } from './kubeconfig.js';
import { shouldCall, type Invocation } from './matching.js';
import { webhookMetricsFor, type WebhookMetrics, type WebhookStep } from './metrics.js';
import { asSeenBy, buildReview, InvalidResponse, verifyResponse, type ReviewResult } from './review.js';

type J = Record<string, any>;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A call that failed (unreachable, timed out, bad answer): the failure policy decides. */
export class CallingWebhookError extends Error {
  constructor(readonly webhook: string, reason: string) {
    super(`failed calling webhook "${webhook}": ${reason}`);
  }
}

/** The reference's rejection status: the webhook's code (403 unless 400 or more) and message. */
export function rejection(webhook: string, status: ReviewResult['status']): StatusError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const s = status ?? {};
  const code = typeof s.code === 'number' && s.code >= 400 ? Math.trunc(s.code) : 403;
  const reason = typeof s.reason === 'string' ? s.reason : '';
  const message = typeof s.message === 'string' && s.message
    ? `${deniedBy}: ${s.message}`
    : reason ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
  const e = new StatusError(code, reason, message);
  if (isObj(s.details)) e.details = s.details;
  return e;
}

/** Replaces the contents of `target` with `source`, keeping nested objects' identity where both are objects. */
export function replaceInPlace(target: J, source: J): void {
  for (const k of Object.keys(target)) if (!(k in source)) delete target[k];
  for (const [k, v] of Object.entries(source)) {
    const cur = target[k];
    if (isObj(cur) && isObj(v)) replaceInPlace(cur, v);
    else target[k] = v;
  }
}

/** Per-request bookkeeping of the mutating pass, for reinvocation. */
interface RequestState {
  /** IfNeeded webhooks called in round 0, in order. */
  ran: string[];
  /** Webhooks to call again in round 1. */
  again: Set<string>;
}

export class WebhookDispatcher {
  readonly source: WebhookSource;
  readonly client: WebhookClient;
  private readonly step: WebhookStep;
  private readonly domain: string;
  private states = new WeakMap<AdmissionAttributes, RequestState>();
  private readonly metrics: WebhookMetrics;

  constructor(private host: PluginHost, readonly mutating: boolean, kubeconfig?: Kubeconfig) {
    this.source = new WebhookSource(host, mutating);
    this.client = new WebhookClient(host, kubeconfig);
    this.source.onChange = (hooks) => this.client.retain(hooks.map((h) => h.clientKey));
    this.step = mutating ? 'admit' : 'validating';
    this.domain = host.brand.domain;
    this.metrics = webhookMetricsFor(host);
  }

  /** Cheap pre-check on every request: any webhooks at all, and not a webhook configuration itself. */
  handles(a: AdmissionAttributes): boolean {
    return this.source.maybeAny() && !isWebhookConfigurationResource(this.domain, a.resource.group, a.resource.resource);
  }

  close(): void {
    this.source.close();
    this.client.close();
  }

  // ---------------------------------------------------------------- one call

  private checkDryRun(h: Webhook, a: AdmissionAttributes): void {
    if (a.dryRun && h.sideEffects !== 'None' && h.sideEffects !== 'NoneOnDryRun') {
      throw errors.badRequest(`admission webhook "${h.name}" does not support dry run`);
    }
  }

  /** Sends the review and checks the answer; every failure to get a usable answer is a CallingWebhookError. */
  private async invoke(h: Webhook, inv: Invocation, a: AdmissionAttributes): Promise<ReviewResult> {
    const version = h.reviewVersion;
    if (!version) throw new CallingWebhookError(h.name, `could not create admission objects: webhook does not accept known AdmissionReview versions (${h.admissionReviewVersions.join(', ') || 'none'}); this server sends v1, v1beta1`);
    const review = buildReview(a, inv, version, this.domain);
    let answer: unknown;
    try {
      const target = await this.client.resolve(h.clientConfig);
      answer = await this.client.post(h.clientKey, target, JSON.stringify(review.body), h.timeoutSeconds);
    } catch (e) {
      if (e instanceof CallError) throw new CallingWebhookError(h.name, `failed to call webhook: ${e.message}`);
      throw e;
    }
    try {
      return verifyResponse(answer, review.uid, version, this.domain, this.mutating);
    } catch (e) {
      if (e instanceof InvalidResponse) throw new CallingWebhookError(h.name, `received invalid webhook response: ${e.message}`);
      throw e;
    }
  }

  /**
   * Runs one call under the failure policy. Returns the answer, or undefined when a failed call is
   * ignored (failurePolicy Ignore). Denials, failures under Fail and internal errors throw.
   */
  private async guarded(h: Webhook, inv: Invocation, a: AdmissionAttributes, round: number): Promise<ReviewResult | undefined> {
    const op: Operation = a.operation;
    const t0 = performance.now();
    let rejected = false;
    try {
      const result = await this.invoke(h, inv, a);
      for (const w of result.warnings) a.warn?.(w);
      for (const [k, v] of Object.entries(result.auditAnnotations)) a.annotate?.(`${h.name}/${k}`, v);
      if (!result.allowed) {
        rejected = true;
        const err = rejection(h.name, result.status);
        this.metrics.reject(h.name, op, this.step, 'no_error', err.code);
        throw err;
      }
      return result;
    } catch (e) {
      if (!(e instanceof CallingWebhookError)) throw e;
      if (h.failurePolicy === 'Ignore') {
        a.annotate?.(`failed-open.${this.mutating ? 'mutation' : 'validating'}.webhook.admission.${this.domain}/round_${round}_index_${h.index}`, h.name);
        this.host.log.warn('failed calling webhook, failing open', { webhook: h.name, configuration: h.configuration, error: e.message });
        return undefined;
      }
      rejected = true;
      this.metrics.reject(h.name, op, this.step, 'calling_webhook_error', 0);
      throw errors.internal(e.message);
    } finally {
      this.metrics.observe(h.name, this.step, op, rejected, (performance.now() - t0) / 1000);
    }
  }

  // ---------------------------------------------------------------- mutating

  /** Applies a mutating webhook's answer; returns whether the object changed. */
  private applyPatch(h: Webhook, inv: Invocation, a: AdmissionAttributes, result: ReviewResult, round: number): boolean {
    let changed = false;
    if (result.patch) {
      const obj = a.object;
      if (a.operation === 'DELETE' || !obj) {
        this.metrics.reject(h.name, a.operation, this.step, 'apiserver_internal_error', 0);
        throw errors.internal(`admission webhook "${h.name}" attempted to modify the object, which is not supported for this operation`);
      }
      let patched: unknown;
      try {
        patched = jsonPatch(asSeenBy(obj, inv), result.patch);
      } catch (e) {
        this.metrics.reject(h.name, a.operation, this.step, 'apiserver_internal_error', 0);
        throw errors.internal(`admission webhook "${h.name}" returned a patch that could not be applied: ${(e as Error).message}`);
      }
      if (!isObj(patched)) {
        this.metrics.reject(h.name, a.operation, this.step, 'apiserver_internal_error', 0);
        throw errors.internal(`admission webhook "${h.name}" returned a patch that does not leave an object`);
      }
      // A patch can add a deep value deep down: the result is decoded as the reference decodes it, with the body limit.
      const deep = depthError(patched);
      if (deep) {
        this.metrics.reject(h.name, a.operation, this.step, 'apiserver_internal_error', 0);
        throw errors.internal(deep);
      }
      // Back to the request's version (the same shape in this server: only apiVersion differs).
      if (inv.converted) patched.apiVersion = obj.apiVersion;
      if (patched.apiVersion !== obj.apiVersion || patched.kind !== obj.kind) {
        this.metrics.reject(h.name, a.operation, this.step, 'apiserver_internal_error', 0);
        throw errors.internal(`admission webhook "${h.name}" may not change the apiVersion or kind of the object`);
      }
      changed = !deepEqual(patched, obj);
      if (changed) replaceInPlace(obj, patched);
    }
    const where = `round_${round}_index_${h.index}`;
    a.annotate?.(`mutation.webhook.admission.${this.domain}/${where}`, JSON.stringify({ configuration: h.configuration, webhook: h.name, mutated: changed }), 'Metadata');
    if (result.patch) {
      a.annotate?.(`patch.webhook.admission.${this.domain}/${where}`, JSON.stringify({ configuration: h.configuration, webhook: h.name, patch: result.patch, patchType: result.patchType }), 'Request');
    }
    return changed;
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    await this.source.ensure();
    const hooks = this.source.hooks;
    if (!hooks.length) return;
    const round = a.reinvoking ? 1 : 0;
    let st = this.states.get(a);
    if (!st || round === 0) this.states.set(a, (st = { ran: [], again: new Set() }));
    if (round === 1 && !st.again.size) return;
    for (const h of hooks) {
      if (round === 1 && !st.again.has(h.key)) continue;
      const inv = await shouldCall(h, a, this.host);
      if (!inv) continue;
      this.checkDryRun(h, a);
      const result = await this.guarded(h, inv, a, round);
      const changed = result ? this.applyPatch(h, inv, a, result, round) : false;
      if (round === 0) {
        // A change makes every IfNeeded webhook called before it due for another call.
        if (changed) for (const k of st.ran) st.again.add(k);
        if (h.reinvocationPolicy === 'IfNeeded') st.ran.push(h.key);
      }
    }
  }

  /**
   * Without `changedAfter` (right after the pass of this plugin): whether an IfNeeded webhook ran.
   * After the whole mutating pass: reinvoke when the object changed after an IfNeeded webhook ran.
   */
  wantsReinvocation(a: AdmissionAttributes, changedAfter?: boolean): boolean {
    const st = this.states.get(a);
    if (!st) return false;
    if (changedAfter === undefined) return st.ran.length > 0 || st.again.size > 0;
    if (changedAfter) for (const k of st.ran) st.again.add(k);
    return st.again.size > 0;
  }

  // ---------------------------------------------------------------- validating

  async validate(a: AdmissionAttributes): Promise<void> {
    await this.source.ensure();
    const hooks = this.source.hooks;
    if (!hooks.length) return;
    const relevant: Invocation[] = [];
    for (const h of hooks) {
      const inv = await shouldCall(h, a, this.host);
      if (inv) relevant.push(inv);
    }
    if (!relevant.length) return;
    const outcomes = await Promise.all(relevant.map(async (inv) => {
      try {
        this.checkDryRun(inv.hook, a);
        await this.guarded(inv.hook, inv, a, 0);
        return undefined;
      } catch (e) {
        return e;
      }
    }));
    const first = outcomes.find((e) => e !== undefined);
    if (first !== undefined) throw first;
  }
}

/** Reads a webhook plugin's options (the AdmissionConfiguration's WebhookAdmissionConfiguration). */
export function webhookOptions(options: Record<string, unknown>): { kubeConfigFile?: string } {
  const f = options.kubeConfigFile;
  if (f !== undefined && (typeof f !== 'string' || !f)) throw new Error('kubeConfigFile must be a file path');
  return { kubeConfigFile: f as string | undefined };
}

