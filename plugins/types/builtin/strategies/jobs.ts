// The Job strategy: unless spec.manualSelector is true, the selector is generated from the job's
// uid and the pod template carries the uid and name labels (the current and the legacy keys), as
// the reference's job registry does on create.
import type { PluginHost, TypeStrategy } from '../../../../kernel/contracts/index.js';
import { at, isObj, type J } from '../../../lib/json.js';

export function jobStrategy(host: PluginHost): TypeStrategy {
  return {
    beginCreate(obj) {
      const uidKey = `batch.${host.brand.keyDomain}/controller-uid`;
      const nameKey = `batch.${host.brand.keyDomain}/job-name`;
      const spec: J = isObj(obj.spec) ? obj.spec : (obj.spec = {});
      // A job without labels of its own shows its template's (the reference's defaulting shares the map).
      const copyLabels = () => {
        const tl = at(spec, 'template.metadata.labels');
        if (isObj(tl) && (!obj.metadata!.labels || !Object.keys(obj.metadata!.labels).length)) obj.metadata!.labels = { ...tl };
      };
      if (spec.manualSelector === true) return copyLabels();
      const uid = obj.metadata!.uid!;
      const name = obj.metadata!.name ?? ''; // a create without a name is refused later, with these labels as the reference makes them
      const template: J = isObj(spec.template) ? spec.template : (spec.template = {});
      const tmd: J = isObj(template.metadata) ? template.metadata : (template.metadata = {});
      const labels: Record<string, string> = isObj(tmd.labels) ? tmd.labels : (tmd.labels = {});
      labels['controller-uid'] ??= uid;
      labels[uidKey] ??= uid;
      labels['job-name'] ??= name;
      labels[nameKey] ??= name;
      const sel: J = isObj(spec.selector) ? spec.selector : (spec.selector = {});
      const ml: Record<string, string> = isObj(sel.matchLabels) ? sel.matchLabels : (sel.matchLabels = {});
      ml[uidKey] ??= uid;
      copyLabels();
    },
  };
}
