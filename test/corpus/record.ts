// Records a server's verdicts on the corpus: run once against the reference kube-apiserver v1.28.7
// (built outside the repository; see docs/validation.md), its answers committed as
// test/corpus/reference-verdicts.jsonl, one probe a line: [id, code, reason, causes, message].
//   node dist/test/corpus/record.js --url https://127.0.0.1:26443 --token-file T --ca CA [--out F] [--only SEED,...]
import { readFileSync, writeFileSync } from 'node:fs';
import { generateProbes } from './generate.js';
import { runProbes, type Verdict } from './run.js';

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
  for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
  const url = args.get('url');
  if (!url || !args.get('token-file') || !args.get('ca')) {
    process.stderr.write('usage: record.js --url URL --token-file FILE --ca FILE [--out FILE] [--only SEED,...] [--concurrency N]\n');
    process.exit(2);
  }
  const only = args.get('only')?.split(',');
  const probes = generateProbes().filter((p) => !only || only.includes(p.seed.name));
  const started = Date.now();
  const verdicts = await runProbes({ url, token: readFileSync(args.get('token-file')!, 'utf8').trim(), ca: readFileSync(args.get('ca')!) }, probes, {
    concurrency: Number(args.get('concurrency') ?? 4),
    onProgress: (n) => process.stderr.write(`${n}/${probes.length} probes, ${Math.round((Date.now() - started) / 1000)} s\n`),
  });
  const out = args.get('out') ?? 'test/corpus/reference-verdicts.jsonl';
  writeVerdicts(out, verdicts);
  process.stderr.write(`${verdicts.size} verdicts written to ${out}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch((e) => { process.stderr.write(`${(e as Error).stack}\n`); process.exit(1); });
