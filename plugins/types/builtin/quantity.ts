// Kubernetes quantities ("100m", "1Gi", "2e3") as plain numbers, enough to compare requests and limits
// (defaulting and HPA validation; ResourceQuota keeps its own exact arithmetic).
const SCALE: Record<string, number> = {
  '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};
export function quantity(q: unknown): number {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(String(q ?? '').trim());
  const scale = m ? SCALE[m[2]!] : undefined;
  return m && scale !== undefined ? Number(m[1]) * scale : NaN;
}
