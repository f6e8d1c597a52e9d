// Feature gates this server knows, with their defaults. Unknown names are refused at start-up,
// as the reference server refuses them.
export const FEATURE_GATES: Record<string, { default: boolean; stage: 'alpha' | 'beta' | 'GA' }> = {
  // Server-side apply (Part A rule 13): on by default, turned off with ServerSideApply=false.
  ServerSideApply: { default: true, stage: 'GA' },
};

export function resolveFeatureGates(set: Record<string, boolean>): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(FEATURE_GATES)) out[k] = v.default;
  for (const [k, v] of Object.entries(set)) {
    if (!(k in FEATURE_GATES)) throw new Error(`unrecognized feature gate: ${k}`);
    out[k] = v;
  }
  return out;
}
