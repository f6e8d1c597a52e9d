// The differential corpus (issue 30): every probe of test/corpus (valid objects of every built-in
// type, mutated field by field, sent as dry-run creates and updates) replayed against our server,
// each answer held to the reference kube-apiserver v1.28.7's recorded verdict: the same status code,
// reason, and causes (field and type).
//
// Where we do not agree yet, the probe's id is in test/corpus/known-disagreements.txt. That list may
// only shrink: a new disagreement fails (a regression), and so does a listed probe that now agrees
// (take it off: CORPUS_UPDATE=1 rewrites the list from this run).
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot, withServer } from '../lib/server.js';
import { generateProbes } from '../corpus/generate.js';
import { SEEDS } from '../corpus/seeds.js';
import { runProbes } from '../corpus/run.js';
import { readVerdicts } from '../corpus/record.js';
import { classOf, disagreements } from '../corpus/compare.js';
import { CATALOG } from '../../plugins/types/builtin/catalog.js';

const corpus = path.join(repoRoot, 'test/corpus');
const knownFile = path.join(corpus, 'known-disagreements.txt');

/** Catalog types with no seed, and why: none may be left out silently. */
const NOT_PROBED: Record<string, string> = {
  'core/v1/ComponentStatus': 'read-only: computed on each read, every write is 405',
};

t.test('every served built-in type has seeds in the corpus', async (t) => {
  const seeded = new Set(SEEDS.map((s) => {
    const [group, version] = s.object.apiVersion.includes('/') ? s.object.apiVersion.split('/') : ['core', s.object.apiVersion];
    return `${group.split('.')[0]}/${version}/${s.object.kind}`;
  }));
  for (const row of CATALOG) {
    const key = `${row.group ? row.group.split('.')[0] : 'core'}/${row.version}/${row.kind}`;
    if (NOT_PROBED[key]) continue;
    t.ok(seeded.has(key), `${key} has a seed in test/corpus/seeds.ts (or a reason in NOT_PROBED)`);
  }
});

// 70,000 probes: about 200 s on a quiet 2-core machine, more than the suite's 360 s per file at load 12.
// The file's own timeout is raised (its root test) and so is the runner's (tap reads "# timeout=<ms>").
t.setTimeout(1_800_000);
t.comment('timeout=1800000');

t.test('the corpus replayed against our server agrees with the reference', { timeout: 1_800_000 }, async (t) => {
  const probes = generateProbes();
  const reference = readVerdicts(path.join(corpus, 'reference-verdicts.jsonl'));
  t.ok(probes.length >= 20_000, `${probes.length} probes`);
  const unrecorded = probes.filter((p) => !reference.has(p.id));
  t.same(unrecorded.slice(0, 10).map((p) => p.id), [], `every probe has the reference's verdict (${unrecorded.length} without: record them again with test/corpus/record.ts)`);

  const s = await withServer(t, { brand: 'kubernetes' });
  const ours = await runProbes({ url: `https://127.0.0.1:${s.port}`, token: s.token, ca: s.ca }, probes, { concurrency: 8 });
  const ds = disagreements(new Map([...reference].filter(([id]) => ours.has(id))), ours);
  const now = new Set(ds.map((d) => d.id));
  const classes = new Map<string, number>();
  for (const d of ds) classes.set(classOf(d), (classes.get(classOf(d)) ?? 0) + 1);
  t.comment(`${probes.length} probes, ${ds.length} disagreements (${[...classes].map(([k, n]) => `${k}: ${n}`).join(', ')})`);

  if (process.env.CORPUS_UPDATE === '1') {
    writeFileSync(knownFile, [...now].sort().join('\n') + '\n');
    t.pass(`${knownFile} rewritten`);
    return;
  }
  const known = new Set(existsSync(knownFile) ? readFileSync(knownFile, 'utf8').split('\n').filter(Boolean) : []);
  const regressions = ds.filter((d) => !known.has(d.id));
  const fixed = [...known].filter((id) => !now.has(id) && ours.has(id));
  t.same(regressions.slice(0, 20).map((d) => `${d.id}: reference ${d.reference.code} ${d.reference.reason ?? ''} ${JSON.stringify(d.reference.causes ?? [])}, ours ${d.ours?.code} ${d.ours?.reason ?? ''} ${JSON.stringify(d.ours?.causes ?? [])}`), [],
    `no disagreement outside the known list (${regressions.length} new)`);
  t.same(fixed.slice(0, 20), [], `no listed disagreement that now agrees (${fixed.length}: take them off the list, CORPUS_UPDATE=1)`);
});
