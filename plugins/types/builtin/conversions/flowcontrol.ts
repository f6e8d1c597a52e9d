// FlowSchema and PriorityLevelConfiguration between flowcontrol.apiserver.<domain>/v1 and v1beta3
// (the storage version: objects written by releases that only had v1beta3 stay readable). The
// shapes are the same; the one difference is what a zero `limited.nominalConcurrencyShares` means:
// in v1 it is zero, in v1beta3 it asks for the default (30) unless the object carries the
// `flowcontrol.apiserver.<domain>/v1beta3-preserve-zero-concurrency-shares` annotation. As in the
// reference, converting a zero into v1beta3 adds that annotation and converting back removes it.
import type { Brand } from '../../../../kernel/contracts/brand.js';
import type { KObject } from '../../../../kernel/contracts/index.js';
import { at, isObj } from '../../../lib/json.js';

export function preserveZeroSharesKey(brand: Brand): string {
  return `flowcontrol.apiserver.${brand.domain}/v1beta3-preserve-zero-concurrency-shares`;
}

export const flowcontrolConversion = {
  storageVersion: 'v1beta3',
  convert(obj: KObject, from: string, to: string, brand: Brand): KObject {
    if (!['v1', 'v1beta3'].includes(from) || !['v1', 'v1beta3'].includes(to)) throw new Error(`no conversion from ${from} to ${to}`);
    const out = JSON.parse(JSON.stringify(obj)) as KObject;
    out.apiVersion = `flowcontrol.apiserver.${brand.domain}/${to}`;
    if (out.kind !== 'PriorityLevelConfiguration') return out;
    const md = (out.metadata ??= {});
    const key = preserveZeroSharesKey(brand);
    if (to === 'v1') {
      if (isObj(md.annotations) && key in md.annotations) {
        delete md.annotations[key];
        if (!Object.keys(md.annotations).length) delete md.annotations;
      }
    } else if (at(out, 'spec.limited.nominalConcurrencyShares') === 0) {
      md.annotations = { ...(md.annotations ?? {}), [key]: '' };
    }
    return out;
  },
};
