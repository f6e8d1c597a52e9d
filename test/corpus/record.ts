// Records a server's verdicts on the corpus: run once against the reference kube-apiserver v1.28.7
// (built outside the repository; see docs/validation.md), its answers committed as
// test/corpus/reference-verdicts.jsonl, one probe a line: [id, code, reason, causes, message].
//   node dist/test/corpus/record.js --url https://127.0.0.1:26443 --token-file T --ca CA [--out F] [--only SEED,...] [--missing]
// and, to see where our server stands (a server of this tree started on a free port, then stopped):
//   node dist/test/corpus/record.js --ours --out /tmp/ours.jsonl [--only SEED,...]
//   node dist/test/corpus/compare.js test/corpus/reference-verdicts.jsonl /tmp/ours.jsonl [--seed S] [--show N]
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { generateProbes } from './generate.js';
import { runProbes, type Verdict } from './run.js';
import { startServer } from '../lib/server.js';

export type VerdictLine = [id: string, code: number, reason: string, causes: [string, string][], message: string];

export function toLine(id: string, v: Verdict): VerdictLine {
  return [id, v.code, v.reason ?? '', v.causes ?? [], v.message ?? ''];
}

export function fromLine(l: VerdictLine): [string, Verdict] {
  const [id, code, reason, causes, message] = l;
  const v: Verdict = { code };
  if (reason) v.reason = reason;
  if (causes.length) v.causes = causes;
  if (message) v.message = message;
  return [id, v];
}

export function readVerdicts(file: string): Map<string, Verdict> {
  const out = new Map<string, Verdict>();
  for (const line of readFileSync(file, 'utf8').split('\n')) if (line) { const [id, v] = fromLine(JSON.parse(line) as VerdictLine); out.set(id, v); }
  return out;
}

export function writeVerdicts(file: string, verdicts: Map<string, Verdict>): void {
  const ids = [...verdicts.keys()].sort();
  writeFileSync(file, ids.map((id) => JSON.stringify(toLine(id, verdicts.get(id)!))).join('\n') + '\n');
}

async function main(): Promise<void> {
  const args = new Map<string, string>();
  for (let i = 2; i < process.argv.length; i++) {
    const key = process.argv[i]!.replace(/^--/, '');
    if (key === 'ours' || key === 'missing') args.set(key, '');
    else args.set(key, process.argv[++i] ?? '');
  }
  const url = args.get('url');
  const ours = args.has('ours');
  if (!ours && (!url || !args.get('token-file') || !args.get('ca'))) {
    process.stderr.write('usage: record.js (--url URL --token-file FILE --ca FILE | --ours) [--out FILE] [--only SEED,...] [--missing] [--concurrency N]\n');
    process.exit(2);
  }
  const only = args.get('only')?.split(',');
  const out = args.get('out') ?? (ours ? 'ours-verdicts.jsonl' : 'test/corpus/reference-verdicts.jsonl');
  // --missing: only the probes the output file has no verdict for (new seeds, values or encodings), added to it
  const have = args.has('missing') && existsSync(out) ? readVerdicts(out) : undefined;
  const probes = generateProbes().filter((p) => (!only || only.includes(p.seed.name)) && !have?.has(p.id));
  const started = Date.now();
  // --ours: a server of this tree (dist/), on a free port and a data directory of its own, stopped after.
  const server = ours ? await startServer({ brand: 'kubernetes' }) : undefined;
  const target = server ? { url: `https://127.0.0.1:${server.port}`, token: server.token, ca: server.ca } : { url: url!, token: readFileSync(args.get('token-file')!, 'utf8').trim(), ca: readFileSync(args.get('ca')!) };
  try {
    const verdicts = await runProbes(target, probes, {
      concurrency: Number(args.get('concurrency') ?? 4),
      onProgress: (n) => process.stderr.write(`${n}/${probes.length} probes, ${Math.round((Date.now() - started) / 1000)} s\n`),
    });
    if (have) for (const [id, v] of have) if (!verdicts.has(id)) verdicts.set(id, v);
    // --only with an existing file: the other seeds' verdicts are kept, these seeds' replaced.
    if (only && existsSync(out)) {
      for (const [id, v] of readVerdicts(out)) if (!only.includes(id.slice(0, id.indexOf(':'))) && !verdicts.has(id)) verdicts.set(id, v);
    }
    writeVerdicts(out, verdicts);
    process.stderr.write(`${verdicts.size} verdicts written to ${out}\n`);
  } finally {
    await server?.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch((e) => { process.stderr.write(`${(e as Error).stack}\n`); process.exit(1); });
