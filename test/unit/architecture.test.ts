// The shape docs/ARCHITECTURE.md promises, checked on the sources: no file over 600 lines, no
// circle of imports between folders, workers/ reaching into the kernel only through its contracts,
// and the kernel proper (without kernel/api and kernel/ops) under 6,000 lines.
import t from 'tap';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../lib/server.js';

const ROOTS = ['kernel', 'plugins', 'workers'];
const MAX_FILE_LINES = 600;
const MAX_KERNEL_PROPER_LINES = 6000;
/**
 * The layers of kernel/ and workers/, lowest first (docs/ARCHITECTURE.md): a folder imports only
 * from its own folder and from layers below its own. `kernel` is main.ts and server.ts.
 */
const LAYERS = [
  ['kernel/contracts'],
  ['kernel/store', 'kernel/http'],
  ['kernel/watch', 'kernel/replicas'],
  ['kernel/ops', 'workers'],
  ['kernel/api'],
  ['kernel/pipeline', 'kernel/host'],
  ['kernel'],
];
/**
 * Folders of kernel/ that are not the kernel proper: the API machinery, operations, and the read
 * loops (several servers in one process, as leader election in ops/ runs several across machines).
 */
const OUTSIDE_KERNEL_PROPER = ['kernel/api/', 'kernel/ops/', 'kernel/replicas/'];

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) sources(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = ROOTS.flatMap((r) => sources(r));
const text = new Map(files.map((f) => [f, readFileSync(path.join(repoRoot, f), 'utf8')]));
const lines = (f: string) => text.get(f)!.split('\n').length - (text.get(f)!.endsWith('\n') ? 1 : 0);

/** Every relative module a file imports (static, type-only, re-exports and dynamic imports). */
function imports(f: string): string[] {
  const out: string[] = [];
  const re = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;
  for (const m of text.get(f)!.matchAll(re)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), m[2]));
    const ts = target.replace(/\.js$/, '.ts');
    if (text.has(ts)) out.push(ts);
    else if (existsSync(path.join(repoRoot, target))) out.push(target);
  }
  return out;
}
const graph = new Map(files.map((f) => [f, imports(f)]));
const folder = (f: string) => path.posix.dirname(f);

/** Strongly connected components with more than one member (Tarjan), each as a sorted list. */
function cycles(nodes: string[], edges: (n: string) => Iterable<string>): string[][] {
  let index = 0;
  const idx = new Map<string, number>(), low = new Map<string, number>(), on = new Set<string>(), stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v);
    for (const w of edges(v)) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const c: string[] = [];
      let w: string;
      do { w = stack.pop()!; on.delete(w); c.push(w); } while (w !== v);
      if (c.length > 1) found.push(c.sort());
    }
  };
  for (const n of nodes) if (!idx.has(n)) visit(n);
  return found;
}

t.test('no source file is over 600 lines', async (t) => {
  const long = files.filter((f) => lines(f) > MAX_FILE_LINES).map((f) => `${f} (${lines(f)})`);
  t.same(long, [], 'files over the limit');
});

/** The layer folder a file belongs to: kernel/<folder> or workers (sub-folders count with their folder). */
function layerFolder(f: string): string | undefined {
  const parts = f.split('/');
  if (parts[0] === 'workers') return 'workers';
  if (parts[0] !== 'kernel') return undefined;
  return parts.length > 2 ? `kernel/${parts[1]}` : 'kernel';
}
const layerOf = (folder: string) => LAYERS.findIndex((l) => l.includes(folder));

t.test('every kernel folder has its layer, and imports only from layers below it', async (t) => {
  const unplaced = [...new Set(files.map(layerFolder).filter((d): d is string => !!d && layerOf(d) < 0))];
  t.same(unplaced, [], 'folders without a layer');
  const upward: string[] = [];
  for (const [f, deps] of graph) {
    const from = layerFolder(f);
    if (!from) continue;
    for (const d of deps) {
      const to = layerFolder(d);
      if (!to || to === from) continue;
      if (layerOf(to) >= layerOf(from)) upward.push(`${f} → ${d}`);
    }
  }
  t.same(upward, [], 'imports of a layer from the same layer or one above it');
});

t.test('no circle of imports between folders', async (t) => {
  const folders = [...new Set(files.map(folder))];
  const edges = new Map<string, Set<string>>(folders.map((d) => [d, new Set()]));
  const via = new Map<string, string>(); // "a → b" → one import that makes the edge, for the message
  for (const [f, deps] of graph) {
    for (const d of deps) {
      if (folder(d) === folder(f) || !edges.has(folder(d))) continue;
      edges.get(folder(f))!.add(folder(d));
      via.set(`${folder(f)} → ${folder(d)}`, `${f} → ${d}`);
    }
  }
  const circles = cycles(folders, (d) => edges.get(d)!).map((c) => [...via].filter(([e]) => c.includes(e.split(' → ')[0]) && c.includes(e.split(' → ')[1])).map(([, i]) => i));
  t.same(circles, [], 'folders that import each other (one import per edge of each circle)');
});

t.test('no circle of imports between files', async (t) => {
  t.same(cycles(files, (f) => graph.get(f)!.filter((d) => graph.has(d))), [], 'files that import each other');
});

t.test('workers import only the kernel\'s contracts', async (t) => {
  const reaching = [...graph].flatMap(([f, deps]) => (f.startsWith('workers/') ? deps.filter((d) => d.startsWith('kernel/') && !d.startsWith('kernel/contracts/')).map((d) => `${f} → ${d}`) : []));
  t.same(reaching, [], 'imports of kernel internals from workers/');
});

t.test('the kernel proper stays small', async (t) => {
  const proper = files.filter((f) => f.startsWith('kernel/') && !OUTSIDE_KERNEL_PROPER.some((p) => f.startsWith(p)));
  const total = proper.reduce((n, f) => n + lines(f), 0);
  t.ok(total < MAX_KERNEL_PROPER_LINES, `kernel proper: ${total} lines in ${proper.length} files (limit ${MAX_KERNEL_PROPER_LINES})`);
});
