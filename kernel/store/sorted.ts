// A sorted list of cache entries by (namespace, name), kept as blocks of bounded size so an insert
// or removal costs a binary search plus a move within one block, not a shift of the whole list.
import type { Entry } from './entry.js';

/** Block size bounds: small enough that a splice is cheap, large enough that the block index stays short. */
const MAX_BLOCK = 1024;
const MIN_BLOCK = 256;

export const before = (e: Entry, ns: string, name: string) => e.namespace < ns || (e.namespace === ns && e.name < name);

export class SortedEntries {
  private blocks: Entry[][] = [];
  size = 0;

  /** Block and offset of the first entry not before (ns, name). */
  private locate(ns: string, name: string): [number, number] {
    const bs = this.blocks;
    let lo = 0, hi = bs.length;
    while (lo < hi) { // first block whose last entry is not before (ns, name)
      const mid = (lo + hi) >>> 1;
      const b = bs[mid];
      if (before(b[b.length - 1], ns, name)) lo = mid + 1;
      else hi = mid;
    }
    if (lo === bs.length) return [lo, 0];
    const b = bs[lo];
    let l = 0, h = b.length;
    while (l < h) {
      const m = (l + h) >>> 1;
      if (before(b[m], ns, name)) l = m + 1;
      else h = m;
    }
    return [lo, l];
  }

  /** How many entries come before (ns, name): one binary search plus a sum over the blocks before it. */
  rank(ns: string, name: string): number {
    const [bi, i] = this.locate(ns, name);
    let r = i;
    for (let b = 0; b < bi; b++) r += this.blocks[b].length;
    return r;
  }

  /** Inserts, or replaces the entry with the same (namespace, name). */
  put(e: Entry): void {
    if (!this.blocks.length) { this.blocks.push([e]); this.size = 1; return; }
    // After the last entry (a start-up loads each resource in key order): appended, no search.
    const lastBlock = this.blocks[this.blocks.length - 1];
    if (before(lastBlock[lastBlock.length - 1], e.namespace, e.name)) {
      if (lastBlock.length < MAX_BLOCK) lastBlock.push(e);
      else this.blocks.push([e]);
      this.size++;
      return;
    }
    let [bi, i] = this.locate(e.namespace, e.name);
    if (bi === this.blocks.length) { bi--; i = this.blocks[bi].length; }
    const b = this.blocks[bi];
    if (i < b.length && b[i].namespace === e.namespace && b[i].name === e.name) { b[i] = e; return; }
    b.splice(i, 0, e);
    this.size++;
    if (b.length > MAX_BLOCK) this.blocks.splice(bi + 1, 0, b.splice(b.length >>> 1));
  }

  remove(ns: string, name: string): void {
    const [bi, i] = this.locate(ns, name);
    const b = this.blocks[bi];
    if (!b || i >= b.length || b[i].namespace !== ns || b[i].name !== name) return;
    b.splice(i, 1);
    this.size--;
    if (!b.length) this.blocks.splice(bi, 1);
    else if (b.length < MIN_BLOCK && bi + 1 < this.blocks.length && b.length + this.blocks[bi + 1].length <= MAX_BLOCK) {
      b.push(...this.blocks[bi + 1]);
      this.blocks.splice(bi + 1, 1);
    }
  }

  /** Entries from (ns, name) on, in order. */
  *from(ns = '', name = ''): Generator<Entry> {
    let [bi, i] = this.locate(ns, name);
    for (; bi < this.blocks.length; bi++, i = 0) {
      const b = this.blocks[bi];
      for (; i < b.length; i++) yield b[i];
    }
  }
}
