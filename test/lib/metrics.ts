import type { TestServer } from './server.js';

/** A metric's value on /metrics (summed over its series); a family with labels has no series until its first. */
export async function metric(s: TestServer, name: string): Promise<number> {
  const text = (await s.get('/metrics')).text;
  let n = 0;
  let found = false;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) { n += Number(m[1]); found = true; }
  if (!found && !text.includes(`# TYPE ${name} `)) throw new Error(`no ${name} in /metrics`);
  return n;
}
