// One SVG per bench run: a panel per measure (ops/s per scenario, LIST milliseconds, watch
// deliveries/s), one horizontal bar per row, each panel on its own scale, targets in their own colours.
import type { ReadResult } from './readpath.js';

interface Bar { label: string; value: number; target: string }
interface Panel { title: string; bars: Bar[] }

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const COLOURS = ['#2b6cb0', '#c05621', '#2f855a', '#6b46c1'];

export function plot(command: string, rows: { scenario: string; target: string; generator: string; concurrency: number; opsPerSec: number }[], reads: ReadResult[]): string {
  const panels: Panel[] = [];
  const byScenario = new Map<string, Bar[]>();
  for (const r of rows) {
    const bars = byScenario.get(r.scenario) ?? [];
    bars.push({ label: `${r.target} · ${r.generator} · c${r.concurrency}`, value: r.opsPerSec, target: r.target });
    byScenario.set(r.scenario, bars);
  }
  for (const [sc, bars] of byScenario) panels.push({ title: `${sc}: requests/s (higher is better)`, bars });
  const list = reads.filter((r) => r.scenario === 'list');
  if (list.length) panels.push({ title: 'LIST of 10,000: p50 ms (lower is better)', bars: list.map((r) => ({ label: `${r.target} · ${r.case}`, value: Number(r['p50 ms']), target: String(r.target) })) });
  const watch = reads.filter((r) => r.scenario === 'watch');
  if (watch.length) panels.push({ title: 'watch: deliveries/s (higher is better)', bars: watch.map((r) => ({ label: `${r.target} · ${r.watchers} watchers`, value: Number(r['deliveries/s']), target: String(r.target) })) });

  const targets = [...new Set(panels.flatMap((p) => p.bars.map((b) => b.target)))];
  const W = 900, LABEL = 300, BAR = 18, GAP = 6;
  let y = 40;
  const parts: string[] = [`<text x="10" y="20" font-size="12">${esc(command)}</text>`];
  for (const p of panels) {
    parts.push(`<text x="10" y="${y + 14}" font-size="14" font-weight="bold">${esc(p.title)}</text>`);
    y += 24;
    const max = Math.max(...p.bars.map((b) => (Number.isFinite(b.value) ? b.value : 0)), 1);
    for (const b of p.bars) {
      const w = Number.isFinite(b.value) ? ((W - LABEL - 90) * b.value) / max : 0;
      const colour = COLOURS[targets.indexOf(b.target) % COLOURS.length];
      parts.push(
        `<text x="${LABEL - 6}" y="${y + 13}" font-size="12" text-anchor="end">${esc(b.label)}</text>`,
        `<rect x="${LABEL}" y="${y}" width="${w.toFixed(1)}" height="${BAR}" fill="${colour}"/>`,
        `<text x="${LABEL + w + 4}" y="${y + 13}" font-size="12">${Number.isFinite(b.value) ? b.value.toLocaleString('en-US') : '-'}</text>`,
      );
      y += BAR + GAP;
    }
    y += 10;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${y + 10}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${parts.join('')}</svg>\n`;
}
