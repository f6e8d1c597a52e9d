// The conversion seam of the built-in catalog: a group whose resource is served in several versions
// stores every object in one version and converts on the way in and out, through the same kernel
// mechanism custom resources use (TypeDef.convert / storageVersion), plus the synchronous
// TypeDef.convertObject so that a watch converts each event once per version.
//
// A group adds a small module of pure functions `convert(obj, from, to)` and one entry below, keyed
// as the catalog's hook tables are ("horizontalpodautoscalers.autoscaling"). Every version of that
// resource is a catalog row; the rows share storage (the resource's prefix), the first row listed is
// the preferred version. A resource stored with another group's (events.<domain> Events with core
// Events) sets `storageGroup`: its row shares that group's prefix and its objects are converted to
// and from that group's storage version.
import { brandGroup, type Brand } from '../../../../kernel/contracts/brand.js';
import type { KObject, TypeDef } from '../../../../kernel/contracts/index.js';
import { StatusError } from '../../../../kernel/contracts/status.js';
import { hpaConversion } from './autoscaling.js';
import { flowcontrolConversion } from './flowcontrol.js';
import { eventsConversion } from './events.js';
import type { ResourceConversion } from './conversion.js';

export const CONVERSIONS: Record<string, ResourceConversion> = {
  'horizontalpodautoscalers.autoscaling': hpaConversion,
  'flowschemas.flowcontrol.apiserver.cluster.io': flowcontrolConversion,
  'prioritylevelconfigurations.flowcontrol.apiserver.cluster.io': flowcontrolConversion,
  // stored as core v1 Events, as the reference stores them
  'events.events.cluster.io': eventsConversion,
};

/** "autoscaling/v2" → "v2"; "v1" → "v1". */
function versionOf(apiVersion: unknown): string {
  const s = typeof apiVersion === 'string' ? apiVersion : '';
  return s.slice(s.indexOf('/') + 1);
}

/** Gives a catalog TypeDef the conversion of its resource (by the row's hook key), when it has one. */
export function attachConversion(t: TypeDef, key: string, brand: Brand): void {
  const c = CONVERSIONS[key];
  if (!c) return;
  // The kernel names apiVersions; a conversion within one group takes version names.
  const cross = c.storageGroup !== undefined;
  const one = (obj: KObject, apiVersion: string): KObject => {
    const from = cross ? String(obj.apiVersion ?? '') : versionOf(obj.apiVersion);
    const to = cross ? apiVersion : versionOf(apiVersion);
    if (from === to) return obj;
    try {
      return c.convert(obj, from, to, brand);
    } catch (e) {
      if (e instanceof StatusError) throw e;
      // Malformed round-trip data (an annotation that is not the JSON it should be): the request is bad.
      throw new StatusError(400, 'BadRequest', `converting ${t.kind} from ${from} to ${to}: ${(e as Error).message}`);
    }
  };
  t.convertObject = one;
  t.convert = async (objs, apiVersion) => objs.map((o) => one(o, apiVersion));
  t.storageVersion = c.storageVersion;
  if (cross) t.storageGroup = brandGroup(brand, c.storageGroup!);
}
