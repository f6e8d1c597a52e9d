// The physical yardstick of the GET figures: a bare uWebSockets.js TLS server (the transport our
// server is built on) answering every request with a fixed 1 KiB body, driven by the same load
// generator in the same run. A figure divided by this one says how much of the machine's plain
// TLS request rate the API server keeps, whatever the machine's speed.
//
//   node dist/bench/yardstick.js        (started by the bench's `yardstick` scenario; prints its port)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generateCA, signCert } from '../kernel/ops/pki.js';
import { uws } from '../kernel/http/uws.js';
import type { Target } from './target.js';
import { pinning } from './lib.js';

const BODY = Buffer.alloc(1024, 'x');

async function serve(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-yardstick-'));
  const ca = await generateCA({ CN: 'yardstick-ca' });
  const leaf = await signCert({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, subject: { CN: 'yardstick' }, ips: ['127.0.0.1'], dnsNames: ['localhost'], usages: ['serverAuth'], days: 1 });
  writeFileSync(path.join(dir, 'tls.crt'), leaf.certPem);
  writeFileSync(path.join(dir, 'tls.key'), leaf.keyPem);
  const app = uws().SSLApp({ cert_file_name: path.join(dir, 'tls.crt'), key_file_name: path.join(dir, 'tls.key') });
  app.any('/*', (res) => { res.cork(() => res.writeHeader('content-type', 'application/json').end(BODY)); });
  app.listen('127.0.0.1', 0, (sock) => {
    rmSync(dir, { recursive: true, force: true });
    process.send!({ port: uws().us_socket_local_port(sock), ca: ca.certPem });
  });
}

/** Starts the yardstick server in a process of its own: a Target the GET load can drive. */
export function yardstickTarget(): Promise<Target> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // held to the server's CPUs as our server is (--server-cpus), so the two are read against each other
  if (pinning.server) execFileSync('taskset', ['-a', '-p', '-c', pinning.server, String(child.pid)], { stdio: 'ignore' });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the yardstick server exited (${code})`)));
    child.once('message', (m: { port: number; ca: string }) => resolve({
      label: 'yardstick', host: '127.0.0.1', port: m.port, token: 'none', ca: m.ca, pid: child.pid, namespace: 'none',
      stop: async () => { child.removeAllListeners('exit'); child.kill(); },
    }));
  });
}

if (process.argv.includes('--serve')) await serve();
