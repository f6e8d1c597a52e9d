// The scheduler's choice among the nodes that fit: the least allocated (CPU and memory weighed
// alike, after placing the pod), as the reference's default NodeResourcesFit scoring; among equal
// scores the next in turn, so pods without requests spread over equal nodes.
import type { KObject } from '../../../kernel/contracts/index.js';
import { nonZeroRequests, type NodeInfo } from './filters.js';

const NANO = 1_000_000_000n;

/** 0..100 for one resource: the share of allocatable left free once the pod is placed. */
function free(allocatable: bigint, requested: bigint): number {
  if (allocatable <= 0n || requested > allocatable) return 0;
  return Number(((allocatable - requested) * 100n) / allocatable);
}

export function score(pod: KObject, info: NodeInfo): number {
  const want = nonZeroRequests(pod);
  const cpu = (info.allocatable.get('cpu')?.nano ?? 0n) / 1_000_000n;
  const memory = (info.allocatable.get('memory')?.nano ?? 0n) / NANO;
  return (free(cpu, info.nonZero.cpu + want.cpu) + free(memory, info.nonZero.memory + want.memory)) / 2;
}

/** Picks among fitting nodes: the best score; ties taken in turn (by node name) across calls. */
export class NodePicker {
  private turn = 0;

  pick(pod: KObject, fitting: NodeInfo[]): NodeInfo {
    const scored = fitting.map((info) => ({ info, s: score(pod, info) }));
    const best = Math.max(...scored.map((x) => x.s));
    const ties = scored.filter((x) => x.s === best).map((x) => x.info).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return ties[this.turn++ % ties.length];
  }
}
