// Helpers of the custom resource tests: create a definition and wait until it is Established.
import { sleep, type TestServer } from './server.js';

/** Polls `check` until it passes (true) or `ms` go by (false). */
export async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await sleep(30);
  }
}

/** Creates a CustomResourceDefinition (of whatever brand its apiVersion names) and waits until it is Established. */
export async function establish(s: TestServer, crd: any): Promise<any> {
  const base = `/apis/${crd.apiVersion}/customresourcedefinitions`;
  const r = await s.request('POST', base, { body: crd });
  if (r.status !== 201) throw new Error(`create CRD: ${r.status} ${r.text}`);
  let got: any;
  const ok = await eventually(async () => {
    got = (await s.get(`${base}/${crd.metadata.name}`)).json;
    return got?.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True');
  });
  if (!ok) throw new Error(`CRD not established: ${JSON.stringify(got?.status)}`);
  return got;
}
