// Where a server's CPU goes, from a V8 CPU profile (`npm run bench -- <scenario> --cpu-prof DIR`):
// self time by stage of the server (transport, pipeline, registry, store, watch, ...) and the top
// functions, as shares of the busy time and, with --ops, as microseconds per operation.
//
//   node dist/bench/profile.js DIR/create.cpuprofile [--ops 9768] [--top 15] [--from <function>]
//
// --from counts only what follows the first sample inside that function (`--from handle`: from the
// first request on, leaving out the start-up's module loading and compiling).
//
// The stage of a sample is the file its function is in; what Node and V8 run on the server's behalf
// (streams, crypto, the garbage collector) is counted apart.
import { readFileSync } from 'node:fs';

interface Frame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: Frame; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

/** Stages by the path of a function's file, first match wins. */
const STAGES: [string, RegExp][] = [
  ['http transport (uWS, front, framing)', /kernel\/http\//],
  ['storage log (LevelDB and its bindings)', /kernel\/store\/log|kernel\/store\/records|kernel\/store\/integrity|classic-level|abstract-level|level-transcoder|module-error/],
  ['object cache', /kernel\/store\/cache|kernel\/store\/sorted|kernel\/store\/entry|kernel\/store\//],
  ['watch fan-out and output budget', /kernel\/watch\/|kernel\/api\/registry\/watch/],
  ['authentication', /plugins\/authenticators\//],
  ['authorization', /plugins\/authorizers\//],
  ['flow control', /plugins\/flowcontrol\//],
  ['admission', /plugins\/admission\/|kernel\/api\/admission/],
  ['managed fields, apply, patch', /workers\/merge\//],
  ['validation and defaults', /kernel\/api\/validation|kernel\/api\/fieldvalidation|plugins\/types\/|\/ajv\//],
  ['encoding (JSON, Protobuf, Table, negotiation)', /kernel\/api\/repr\/|workers\/body\/protocodec|protobufjs/],
  ['registry (read and write paths)', /kernel\/api\/registry\/|kernel\/api\/endpoints\/resources|kernel\/api\/selectors|kernel\/api\/options/],
  ['request pipeline (server, routing, audit, metrics)', /kernel\/server|kernel\/pipeline\/|kernel\/host\/|kernel\/api\/requestinfo|kernel\/ops\/audit|kernel\/ops\/metrics|kernel\/api\/catalog|kernel\/api\/proxy/],
  ['controllers', /plugins\/controllers\//],
  ['decoding and field checks of bodies', /workers\/body\//],
  ['workers and pool', /workers\/|piscina/],
  ['other project code', /\/(kernel|plugins)\//],
  ['Node.js and V8 internals', /^node:|^$|internal\//],
];

function stageOf(f: Frame): string {
  if (f.functionName === '(idle)') return 'idle';
  if (f.functionName === '(garbage collector)') return 'garbage collector';
  if (f.functionName === '(program)') return 'V8 (program)';
  for (const [name, re] of STAGES) if (re.test(f.url)) return name;
  return 'other dependencies';
}

function main() {
  const args = process.argv.slice(2);
  const file = args.find((a, i) => !a.startsWith('--') && !/^\d+$/.test(a) && args[i - 1] !== '--from');
  const fromFn = args.includes('--from') ? args[args.indexOf('--from') + 1] : undefined;
  const flag = (n: string) => { const i = args.indexOf(n); return i >= 0 ? Number(args[i + 1]) : undefined; };
  if (!file) {
    process.stderr.write('usage: node dist/bench/profile.js <file.cpuprofile> [--ops <operations in the profile>] [--top <n>] [--from <function>]\n');
    process.exit(2);
  }
  const ops = flag('--ops');
  const top = flag('--top') ?? 15;
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inside = (id: number | undefined): boolean => id !== undefined && (byId.get(id)!.callFrame.functionName === fromFn || inside(parent.get(id)));
  const first = fromFn ? Math.max(0, p.samples.findIndex((id) => inside(id))) : 0;
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => { if (i >= first) self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)); });
  const stages = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    const stage = stageOf(f);
    total += us;
    if (stage === 'idle') { idle += us; continue; }
    stages.set(stage, (stages.get(stage) ?? 0) + us);
    const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
  }
  const busy = total - idle;
  const line = (label: string, us: number) => `${(us / 1000).toFixed(0).padStart(8)} ms ${(100 * us / busy).toFixed(1).padStart(5)} %${ops ? `${(us / ops).toFixed(1).padStart(8)} µs/op` : ''}  ${label}`;
  process.stdout.write(`${file}\nmain thread: ${(total / 1e6).toFixed(2)} s profiled, ${(busy / 1e6).toFixed(2)} s busy (${(100 * busy / total).toFixed(0)} %)${ops ? `, ${(busy / ops).toFixed(1)} µs busy per operation over ${ops} operations` : ''}\n\nby stage (self time):\n`);
  for (const [s, us] of [...stages].sort((a, b) => b[1] - a[1])) process.stdout.write(line(s, us) + '\n');
  process.stdout.write(`\ntop ${top} functions (self time):\n`);
  for (const [n, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(line(n, us) + '\n');
}

main();
