// Keeps the reference's API Priority and Fairness configuration in place as stored objects: the
// mandatory priority levels and flow schemas (exempt, catch-all) are recreated and reset whenever
// they change; the suggested ones are created when missing and reset while their
// `apf.<domain>/autoupdate-spec` annotation is "true". The data is the apf plugin's defaults.
// Every FlowSchema's Dangling condition says whether its priority level exists, as the reference's
// APF configuration controller keeps it.
import { CONTRACT_VERSION, type KObject, type PluginModule, type TypeDef } from '../../../kernel/contracts/index.js';
import { defaultFlowSchemas, defaultPriorityLevels } from '../../flowcontrol/apf/defaults.js';
import { WorkQueue } from '../../lib/work-queue.js';

const MANDATORY = new Set(['exempt', 'catch-all']);

/** JSON with sorted keys, so stored and wanted specs compare by content. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'flowcontrol-config',
  create(_options, host) {
    const group = `flowcontrol.apiserver.${host.brand.domain}`;
    const autoKey = `apf.${host.brand.keyDomain}/autoupdate-spec`;
    const unwatch: (() => void)[] = [];

    async function ensureOne(type: TypeDef, kind: string, name: string, spec: object) {
      const cur = await host.objects.get(type, '', name);
      if (!cur) {
        try {
          await host.objects.create(type, { apiVersion: `${type.group}/${type.version}`, kind, metadata: { name, annotations: { [autoKey]: 'true' } }, spec });
        } catch (e) {
          if ((e as { code?: number }).code !== 409) throw e;
        }
        return;
      }
      const mandatory = MANDATORY.has(name);
      const auto = cur.metadata?.annotations?.[autoKey] === 'true';
      if (!mandatory && !auto) return;
      if (canonical(cur.spec) === canonical(spec) && (!mandatory || auto)) return;
      const next: KObject = { ...cur, spec, metadata: { ...cur.metadata, annotations: { ...cur.metadata?.annotations, [autoKey]: 'true' } } };
      await host.objects.update(type, next);
    }

    async function ensureAll(_key: string) {
      const pl = host.type(group, 'prioritylevelconfigurations');
      const fs = host.type(group, 'flowschemas');
      if (!pl || !fs) return;
      for (const l of defaultPriorityLevels()) await ensureOne(pl, 'PriorityLevelConfiguration', l.name, l.spec);
      for (const s of defaultFlowSchemas(host.brand)) await ensureOne(fs, 'FlowSchema', s.name, s.spec);
    }

    /** The Dangling condition of every FlowSchema, with the reference's reasons and messages. */
    async function syncDangling() {
      const pl = host.type(group, 'prioritylevelconfigurations');
      const fs = host.type(group, 'flowschemas');
      if (!pl || !fs) return;
      const levels = new Set((await host.objects.list(pl)).map((l) => l.metadata?.name));
      for (const s of await host.objects.list(fs)) {
        const plName = String((s.spec as { priorityLevelConfiguration?: { name?: unknown } } | undefined)?.priorityLevelConfiguration?.name ?? '');
        const dangling = !levels.has(plName);
        const want = {
          status: dangling ? 'True' : 'False',
          reason: dangling ? 'NotFound' : 'Found',
          message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(plName)} ${dangling ? 'but there is no such object' : 'and it exists'}`,
        };
        const conditions = ((s.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []);
        const cur = conditions.find((c) => c.type === 'Dangling');
        if (cur && cur.status === want.status && cur.reason === want.reason && cur.message === want.message) continue;
        const condition = { type: 'Dangling', status: want.status, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), reason: want.reason, message: want.message };
        const next: KObject = { ...s, status: { ...(s.status as object), conditions: [...conditions.filter((c) => c.type !== 'Dangling'), condition] } };
        try {
          await host.objects.update(fs, next, 'status');
        } catch (e) {
          // Changed or gone meanwhile: its own event brings it back here.
          if (![404, 409].includes((e as { code?: number }).code ?? 0)) throw e;
        }
      }
    }

    const work = (key: string) => (key === 'dangling' ? syncDangling() : ensureAll(key));
    const queue = new WorkQueue(work, (_k, e) => host.log.warn('flowcontrol-config', { error: String(e) }), 50);

    return {
      postStartHooks: ['priority-and-fairness-config-producer'],
      async start() {
        // In place before the server serves: the flow control plugin reads them.
        await ensureAll('').catch((e) => host.log.warn('flowcontrol-config', { error: String(e) }));
        const names = new Set([...defaultPriorityLevels().map((l) => l.name), ...defaultFlowSchemas(host.brand).map((s) => s.name)]);
        for (const r of ['prioritylevelconfigurations', 'flowschemas']) {
          const t = host.type(group, r);
          if (t) unwatch.push(host.objects.watch(t, (_ev, o) => {
            if (names.has(o.metadata?.name ?? '')) queue.add('');
            queue.add('dangling');
          }));
        }
        queue.add('dangling');
      },
      async stop() {
        for (const u of unwatch) u();
        await queue.stop();
      },
    };
  },
};
export default plugin;
