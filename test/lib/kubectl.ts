// Runs the stock kubectl against a test server (kubernetes brand). Tests skip when kubectl is absent.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TestServer } from './server.js';

export const kubectlPath: string | undefined = (() => {
  const r = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
})();

export const noKubectl = kubectlPath ? false : 'kubectl is not installed (apt-get install -y kubectl); .ci/run installs it';

export interface KubectlResult { code: number; stdout: string; stderr: string }

/** Where the stock kubectl releases the tests run live (kubectl.1.27 … kubectl.1.33). */
export const KUBECTL_DIR = '/usr/lib/google-cloud-sdk/bin';

/** Path of a kubectl release, or undefined when it is not installed. */
export function kubectlRelease(version: string): string | undefined {
  const p = path.join(KUBECTL_DIR, `kubectl.${version}`);
  return existsSync(p) ? p : undefined;
}

/** A long-running kubectl (e.g. `get -w`) whose output is collected as it arrives. */
export function startKubectl(s: TestServer, args: string[], bin = kubectlPath!) {
  const child = spawn(bin, ['--kubeconfig', path.join(s.dataDir, 'admin.kubeconfig'), ...args], { env: { ...process.env, HOME: s.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '', code: null as number | null, exited: false };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => { out.code = code; out.exited = true; resolve(code); }));
  return { child, out, exit };
}

export function kubectl(s: TestServer, args: string[], opts: { input?: string; timeoutMs?: number; bin?: string } = {}): Promise<KubectlResult> {
  // A --kubeconfig among the arguments wins over the admin token kubeconfig.
  const kubeconfig = args.includes('--kubeconfig') ? [] : ['--kubeconfig', path.join(s.dataDir, 'admin.kubeconfig')];
  return new Promise((resolve) => {
    const child = execFile(opts.bin ?? kubectlPath!, [...kubeconfig, ...args], { timeout: opts.timeoutMs ?? 60_000, env: { ...process.env, HOME: s.dataDir } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
    if (opts.input !== undefined) {
      child.stdin!.write(opts.input);
      child.stdin!.end();
    }
  });
}
