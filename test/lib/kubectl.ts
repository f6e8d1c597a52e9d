// Runs the stock kubectl against a test server (kubernetes brand). Tests skip when kubectl is absent.
import { execFile, spawnSync } from 'node:child_process';
import path from 'node:path';
import type { TestServer } from './server.js';

export const kubectlPath: string | undefined = (() => {
  const r = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
})();

export const noKubectl = kubectlPath ? false : 'kubectl is not installed (apt-get install -y kubectl); .ci/run installs it';

export interface KubectlResult { code: number; stdout: string; stderr: string }

export function kubectl(s: TestServer, args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
  // A --kubeconfig among the arguments wins over the admin token kubeconfig.
  const kubeconfig = args.includes('--kubeconfig') ? [] : ['--kubeconfig', path.join(s.dataDir, 'admin.kubeconfig')];
  return new Promise((resolve) => {
    const child = execFile(kubectlPath!, [...kubeconfig, ...args], { timeout: opts.timeoutMs ?? 60_000, env: { ...process.env, HOME: s.dataDir } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
    if (opts.input !== undefined) {
      child.stdin!.write(opts.input);
      child.stdin!.end();
    }
  });
}
