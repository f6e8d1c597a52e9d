// The admission chain: every mutating step in order, then every validating step in order.
// Any refusal rejects the whole request; a plain Error becomes 403 Forbidden.
import type { AdmissionAttributes, AdmissionPlugin } from '../contracts/index.js';
import { errors, isStatusError, StatusError } from '../contracts/status.js';

export interface NamedAdmission { name: string; plugin: AdmissionPlugin }

function refusal(name: string, err: unknown): StatusError {
  if (isStatusError(err)) return err;
  return errors.forbidden(`admission plugin "${name}" denied the request: ${(err as Error)?.message ?? String(err)}`);
}

export class AdmissionChain {
  constructor(readonly plugins: NamedAdmission[]) {}

  private applicable(a: AdmissionAttributes): NamedAdmission[] {
    return this.plugins.filter((p) => p.plugin.handles(a.operation, a));
  }

  private checkDryRun(list: NamedAdmission[], a: AdmissionAttributes) {
    if (!a.dryRun) return;
    for (const p of list) {
      if (p.plugin.sideEffects) throw errors.badRequest(`admission plugin "${p.name}" has side effects and does not support dry run`);
    }
  }

  /**
   * The mutating phase, then at most one reinvocation round: each plugin that asks for it
   * (wantsReinvocation, told whether the object changed after its admit() returned, found by
   * comparing the serialized object then and at the end of the pass) runs admit() once more, in
   * order, with attrs.reinvoking set. Only requests where a plugin may ask pay for the serializing.
   * True when a plugin's admit() ran: it may have changed the object (the write shapes it again).
   */
  async admit(a: AdmissionAttributes): Promise<boolean> {
    const list = this.applicable(a);
    this.checkDryRun(list, a);
    let after: Map<NamedAdmission, string> | undefined, ran = false;
    for (const p of list) {
      if (!p.plugin.admit) continue;
      ran = true;
      try { await p.plugin.admit(a); } catch (e) { throw refusal(p.name, e); }
      if (p.plugin.wantsReinvocation?.(a)) (after ??= new Map()).set(p, JSON.stringify(a.object ?? null));
    }
    if (!after) return ran;
    const final = JSON.stringify(a.object ?? null);
    const again = [...after].filter(([p, seen]) => p.plugin.wantsReinvocation!(a, seen !== final)).map(([p]) => p);
    if (!again.length) return ran;
    a.reinvoking = true;
    try {
      for (const p of again) {
        try { await p.plugin.admit!(a); } catch (e) { throw refusal(p.name, e); }
      }
    } finally {
      delete a.reinvoking;
    }
    return ran;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    for (const p of this.applicable(a)) {
      if (!p.plugin.validate) continue;
      try { await p.plugin.validate(a); } catch (e) { throw refusal(p.name, e); }
    }
  }
}

/**
 * --admission-control-config-file: an AdmissionConfiguration whose plugins[] give each admission
 * plugin its configuration, inline (`configuration`) or in a file (`path`, relative to this file).
 * Returns plugin name → options.
 */
export async function readAdmissionConfig(file: string, brand: { domain: string }): Promise<Record<string, Record<string, unknown>>> {
  const { readFile } = await import('node:fs/promises');
  const path = await import('node:path');
  const YAML = (await import('yaml')).default;
  const load = async (f: string) => {
    try { return YAML.parse(await readFile(f, 'utf8')); } catch (e) { throw new Error(`admission configuration ${f}: ${(e as Error).message}`); }
  };
  const doc = await load(file);
  const okVersions = [`apiserver.config.${brand.domain}/v1`, `apiserver.config.${brand.domain}/v1alpha1`, `apiserver.${brand.domain}/v1alpha1`];
  if (!doc || doc.kind !== 'AdmissionConfiguration' || !okVersions.includes(doc.apiVersion)) {
    throw new Error(`admission configuration ${file}: expected kind AdmissionConfiguration in ${okVersions.join(' or ')}`);
  }
  const out: Record<string, Record<string, unknown>> = {};
  for (const [i, p] of (Array.isArray(doc.plugins) ? doc.plugins : []).entries()) {
    if (!p || typeof p.name !== 'string') throw new Error(`admission configuration ${file}: plugins[${i}].name is required`);
    if (p.path !== undefined && p.configuration !== undefined) throw new Error(`admission configuration ${file}: plugins[${i}] has both path and configuration`);
    const conf = p.path !== undefined ? await load(path.resolve(path.dirname(file), String(p.path))) : p.configuration;
    out[p.name] = conf && typeof conf === 'object' ? conf : {};
  }
  return out;
}
