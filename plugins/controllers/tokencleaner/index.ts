// tokencleaner: deletes bootstrap token Secrets once their `expiration` has passed, at that moment
// (a timer per token) and on a periodic sweep (`intervalSeconds`, default 60).
import { CONTRACT_VERSION, type KObject, type PluginModule } from '../../../kernel/contracts/index.js';
import { bootstrapSecretType } from '../../lib/bootstrap-tokens.js';

const plugin: PluginModule<'controller'> = {
  kind: 'controller',
  contract: CONTRACT_VERSION,
  name: 'tokencleaner',
  create(options, host) {
    const secretType = host.type('', 'secrets')!;
    const ns = host.brand.systemNamespace;
    const interval = (typeof options.intervalSeconds === 'number' && options.intervalSeconds > 0 ? options.intervalSeconds : 60) * 1000;
    const timers = new Map<string, NodeJS.Timeout>();
    let sweepTimer: NodeJS.Timeout | undefined;
    let unwatch = () => {};
    const expiry = (s: KObject): number | undefined => {
      const raw = (s.data as Record<string, string> | undefined)?.expiration;
      const at = raw ? Date.parse(Buffer.from(raw, 'base64').toString()) : NaN;
      return Number.isNaN(at) ? undefined : at;
    };
    async function check(name: string) {
      const s = await host.objects.get(secretType, ns, name);
      const at = s && s.type === bootstrapSecretType(host) ? expiry(s) : undefined;
      if (at === undefined) return;
      if (at <= Date.now()) {
        host.log.info('tokencleaner: deleting expired bootstrap token', { secret: name });
        await host.objects.delete(secretType, ns, name);
        return;
      }
      clearTimeout(timers.get(name));
      const t = setTimeout(() => { timers.delete(name); void check(name).catch(() => {}); }, Math.min(at - Date.now() + 10, 2 ** 31 - 1));
      t.unref();
      timers.set(name, t);
    }
    const sweep = async () => { for (const s of await host.objects.list(secretType, ns)) await check(s.metadata!.name!).catch((e) => host.log.warn('tokencleaner', { error: String(e) })); };
    return {
      // The reference controller manager does this work: step aside while it runs (kernel/ops/step-aside.ts).
      externalLease: 'kube-controller-manager',
      async start() {
        unwatch = host.objects.watch(secretType, (ev, o) => { if (ev !== 'DELETED' && o.metadata?.namespace === ns) void check(o.metadata.name!).catch(() => {}); });
        await sweep();
        sweepTimer = setInterval(() => void sweep(), interval);
        sweepTimer.unref();
      },
      stop() { unwatch(); clearInterval(sweepTimer); for (const t of timers.values()) clearTimeout(t); },
    };
  },
};
export default plugin;
