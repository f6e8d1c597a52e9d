// Compares two verdict files (the reference's and a run of ours) and prints where they disagree,
// grouped so that one rule's many probes read as one line:
//   node dist/test/corpus/compare.js test/corpus/reference-verdicts.jsonl OURS.jsonl [--show N] [--seed S] [--class C]
import { sameVerdict, type Verdict } from './run.js';
import { readVerdicts } from './record.js';

export interface Disagreement { id: string; reference: Verdict; ours: Verdict | undefined }

export function disagreements(reference: Map<string, Verdict>, ours: Map<string, Verdict>): Disagreement[] {
  const out: Disagreement[] = [];
  for (const [id, ref] of reference) {
    const o = ours.get(id);
    if (!o || !sameVerdict(ref, o)) out.push({ id, reference: ref, ours: o });
  }
  return out;
}

/** A disagreement's class: "422→201" (codes), or "422 causes" when only the causes differ. */
export function classOf(d: Disagreement): string {
  if (!d.ours) return 'missing';
  if (d.reference.code !== d.ours.code) return `${d.reference.code}→${d.ours.code}`;
  if ((d.reference.reason ?? '') !== (d.ours.reason ?? '')) return `${d.reference.code} reason`;
  return `${d.reference.code} causes`;
}

const show = (v: Verdict | undefined) => (v ? `${v.code} ${v.reason ?? ''} ${JSON.stringify(v.causes ?? [])} ${v.message ?? ''}` : '(none)');

function main(): void {
  const [refFile, oursFile, ...rest] = process.argv.slice(2);
  const opt = new Map<string, string>();
  for (let i = 0; i < rest.length; i += 2) opt.set(rest[i]!.replace(/^--/, ''), rest[i + 1] ?? '');
  const ours = readVerdicts(oursFile!);
  // a partial run (--only) is compared on the probes it ran
  const ds = disagreements(new Map([...readVerdicts(refFile!)].filter(([id]) => ours.has(id))), ours)
    .filter((d) => !opt.get('seed') || d.id.startsWith(`${opt.get('seed')}:`))
    .filter((d) => !opt.get('class') || classOf(d) === opt.get('class'));
  const count = (key: (d: Disagreement) => string) => {
    const m = new Map<string, number>();
    for (const d of ds) m.set(key(d), (m.get(key(d)) ?? 0) + 1);
    return [...m].sort((a, b) => b[1] - a[1]);
  };
  console.log(`${ds.length} disagreements`);
  console.log('by class:', count(classOf).map(([k, n]) => `${k} ${n}`).join(', '));
  console.log('by seed:', count((d) => d.id.split(':')[0]!).map(([k, n]) => `${k} ${n}`).join(', '));
  // the field the mutation touched, with list indexes and the seed's path prefix kept: one rule per line
  const rules = count((d) => { const [, op, path, m] = d.id.split(':'); return `${op} ${path!.replace(/\[\d+\]/g, '[]')} ${m} ${classOf(d)}`; });
  const n = Number(opt.get('show') ?? 40);
  for (const [k, c] of rules.slice(0, n)) {
    const ex = ds.find((d) => { const [, op, path, m] = d.id.split(':'); return `${op} ${path!.replace(/\[\d+\]/g, '[]')} ${m} ${classOf(d)}` === k; })!;
    console.log(`\n${c}× ${k}\n  e.g. ${ex.id}\n  reference: ${show(ex.reference)}\n  ours:      ${show(ex.ours)}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
