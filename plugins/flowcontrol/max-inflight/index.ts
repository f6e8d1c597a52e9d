// The reference's limit when API Priority and Fairness is off (--enable-priority-and-fairness=false):
// at most --max-requests-inflight read requests and --max-mutating-requests-inflight writes at once,
// no queuing; system:masters and long-running requests (watch, exec, proxy, ...) are not counted.
import type { FlowControl, FlowDecision, FlowRequest, PluginModule } from '../../../kernel/contracts/index.js';
import { CONTRACT_VERSION } from '../../../kernel/contracts/index.js';

export interface MaxInflightOptions {
  /** 0: unlimited. */
  maxRequestsInflight?: number;
  maxMutatingRequestsInflight?: number;
}

const READ_VERBS = new Set(['get', 'list', 'watch', 'proxy']);
const free: FlowDecision = { run: true, release() {} };

const plugin: PluginModule<'flowcontrol'> = {
  kind: 'flowcontrol',
  contract: CONTRACT_VERSION,
  name: 'max-inflight',
  create(options: MaxInflightOptions, host): FlowControl {
    // the server's limits: with read loops, each loop has its share (0: no limit)
    const share = (n: number) => (n > 0 ? Math.ceil(n / Math.max(1, host.loops ?? 1)) : n);
    const limits = { read: share(options.maxRequestsInflight ?? 400), mutating: share(options.maxMutatingRequestsInflight ?? 200) };
    const inUse = { read: 0, mutating: 0 };
    const rejected = host.metrics.counter('apiserver_dropped_requests_total', '[ALPHA] Number of requests dropped with \'Try again later\' response', ['request_kind']);
    return {
      admit(req: FlowRequest): FlowDecision {
        if (req.longRunning || req.info.verb === 'watch' || req.user.groups.includes('system:masters')) return free;
        const kind = !req.info.isResourceRequest || READ_VERBS.has(req.info.verb) ? 'read' : 'mutating';
        const limit = limits[kind];
        if (limit <= 0) return free;
        if (inUse[kind] >= limit) {
          rejected.inc({ request_kind: kind === 'read' ? 'readOnly' : 'mutating' });
          return { run: false, retryAfterSeconds: 1 };
        }
        inUse[kind]++;
        let released = false;
        return { run: true, release() { if (!released) { released = true; inUse[kind]--; } } };
      },
    };
  },
};
export default plugin;
