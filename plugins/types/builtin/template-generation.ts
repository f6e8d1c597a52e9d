// A DaemonSet's template generation, which apps/v1 carries as the annotation
// deprecated.daemonset.template.generation (the reference's internal spec.templateGeneration):
// 1 on create (or what the annotation says, if more), kept on update, and one more whenever the
// pod template changes, as the reference's DaemonSet strategy keeps it.
import type { KObject, TypeStrategy } from '../../../kernel/contracts/index.js';
import { isObj } from '../../lib/json.js';
import { canon } from './validation/causes.js';

const ANNOTATION = 'deprecated.daemonset.template.generation';

function generationOf(o: KObject): number {
  const v = Number(o.metadata?.annotations?.[ANNOTATION]);
  return Number.isSafeInteger(v) ? v : 0;
}

function setGeneration(o: KObject, n: number): void {
  const md = (o.metadata ??= {});
  md.annotations = { ...(md.annotations ?? {}), [ANNOTATION]: String(n) };
}

const templateOf = (o: KObject) => canon(isObj(o.spec) ? (o.spec as Record<string, unknown>).template : undefined);

/** The DaemonSet strategy with the template generation kept in its create and update hooks. */
export function withTemplateGeneration(key: string, st: TypeStrategy | undefined): TypeStrategy | undefined {
  if (key !== 'daemonsets.apps') return st;
  return {
    ...st,
    beginCreate: (obj, ctx) => { setGeneration(obj, Math.max(1, generationOf(obj))); return st?.beginCreate?.(obj, ctx); },
    beginUpdate: (obj, old, ctx) => {
      if (!ctx.subresource) setGeneration(obj, Math.max(1, generationOf(old)) + (templateOf(obj) !== templateOf(old) ? 1 : 0));
      return st?.beginUpdate?.(obj, old, ctx);
    },
  };
}
