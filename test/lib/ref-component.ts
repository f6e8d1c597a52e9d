// A reference control-plane component (kube-controller-manager, kube-scheduler) run against a test
// server: its log kept line by line, stopped at teardown, and read for lines that show something wrong.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { signCert } from '../../kernel/ops/pki.js';
import type { TestServer } from './server.js';

/** Refusals, failed lists and watches, decode errors: never expected in a component's log. */
export const NEVER = /forbidden|Failed to watch|failed to list|no kind|unable to decode|ended with: an error/i;
/** More of one message than this is a loop (a component retrying forever backs off, but not this slowly). */
const LOOP = 6;

export interface LogRules {
  /** Lines the workload asks for: not counted at all. */
  wanted?: RegExp;
  /** Error lines every cluster of this kind shows (a missing cloud provider): not counted. */
  expected?: RegExp;
  /** Lost races, retried by the component: counted, bad only when repeated more than LOOP times. */
  race?: RegExp;
}

/** The log lines that show something wrong: any of NEVER; error lines other than races; a race repeated more than LOOP times. */
export function badLines(log: string[], rules: LogRules = {}): string[] {
  const seen = new Map<string, number>();
  const bad: string[] = [];
  for (const l of log) {
    // an expected line is named precisely (a namespace's refusal while it terminates is a 'forbidden')
    if (rules.wanted?.test(l) || rules.expected?.test(l)) continue;
    if (NEVER.test(l)) { bad.push(l); continue; }
    if (!/^E\d{4}/.test(l)) continue;
    if (!rules.race?.test(l)) { bad.push(l); continue; }
    const msg = l.replace(/^E\S+ \S+\s+\d+ /, '');
    const n = (seen.get(msg) ?? 0) + 1;
    seen.set(msg, n);
    if (n > LOOP) bad.push(l);
  }
  return bad;
}

/** Starts `binary` with `args`, keeping its log; stopped with SIGTERM at teardown. `logFile` keeps the whole log after the run. */
export function startComponent(t: { teardown(fn: () => unknown): void }, binary: string, args: string[], logFile?: string) {
  const proc = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  let buf = '';
  const onData = (c: Buffer) => {
    buf += c.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) { log.push(buf.slice(0, i)); buf = buf.slice(i + 1); }
  };
  proc.stdout.on('data', onData);
  proc.stderr.on('data', onData);
  t.teardown(() => new Promise<void>((r) => { if (proc.exitCode !== null) r(); else { proc.once('exit', () => r()); proc.kill('SIGTERM'); } }));
  if (logFile) t.teardown(() => writeFileSync(logFile, `${log.join('\n')}\n`));
  return { proc, log };
}

/**
 * A kubeconfig for `CN` (in groups `O`) by a client certificate from the server's CA, as kubeadm
 * writes a component's (scheduler.conf, a kubelet's): the component gets what the default policy
 * gives that identity, no more.
 */
export async function componentKubeconfig(s: TestServer, CN: string, O: string[] = []): Promise<string> {
  const pki = path.join(s.dataDir, 'pki');
  const cert = await signCert({
    caCertPem: readFileSync(path.join(pki, 'ca.crt'), 'utf8'), caKeyPem: readFileSync(path.join(pki, 'ca.key'), 'utf8'),
    subject: { CN, O }, usages: ['clientAuth'], days: 1,
  });
  const b64 = (x: string | Buffer) => Buffer.from(x).toString('base64');
  const file = path.join(s.dataDir, `${CN.replace(/:/g, '-')}.kubeconfig`);
  writeFileSync(file, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: s.url, 'certificate-authority-data': b64(s.ca) } }],
    users: [{ name: 'u', user: { 'client-certificate-data': b64(cert.certPem), 'client-key-data': b64(cert.keyPem) } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
  }));
  return file;
}

/**
 * kube-controller-manager's flags as kubeadm sets them, one service account per controller, leader
 * election on (its default): its Lease is how this server sees it and steps its own controllers aside.
 */
export function controllerManagerArgs(s: TestServer, kubeconfig: string): string[] {
  const d = s.dataDir;
  return ['--kubeconfig', kubeconfig, '--authentication-kubeconfig', kubeconfig, '--authorization-kubeconfig', kubeconfig, '--use-service-account-credentials',
    '--service-account-private-key-file', path.join(d, 'pki/apiserver.key'), '--root-ca-file', path.join(d, 'pki/ca.crt'),
    '--cluster-signing-cert-file', path.join(d, 'pki/ca.crt'), '--cluster-signing-key-file', path.join(d, 'pki/ca.key'),
    '--leader-elect=true', '--bind-address', '127.0.0.1', '--secure-port', '0', '--controllers=*'];
}
