// Pod addresses on a simulated node: each pod that is not on the host network holds one address of
// its node's /24 from its start until it finishes or goes; a restart of the server takes the
// addresses its pods already show.
import { ipNum, ipText } from './options.js';

/** Pod addresses of one node's /24: .2 to .254 (.0 the network, .1 the bridge, .255 broadcast), each held by a pod uid. */
export class PodAddresses {
  private held = new Map<string, number>();
  constructor(private base: number) {}

  take(uid: string, wanted?: string): string {
    const have = this.held.get(uid);
    if (have !== undefined) return ipText(this.base + have);
    const used = new Set(this.held.values());
    const w = wanted ? this.offset(wanted) : undefined;
    const free = w !== undefined && !used.has(w) ? w : [...Array(253).keys()].map((i) => i + 2).find((i) => !used.has(i));
    if (free === undefined) throw new Error('no free pod address on the node');
    this.held.set(uid, free);
    return ipText(this.base + free);
  }

  free(uid: string): void { this.held.delete(uid); }

  /** The offset of an address in this node's range, if it is one of its pod addresses. */
  private offset(ip: string): number | undefined {
    const n = ipNum(ip);
    return n - this.base >= 2 && n - this.base <= 254 ? n - this.base : undefined;
  }
}
