// Debian's wrk as a second load generator for GET and create: a C client that costs little CPU per
// request, so it checks that our own generator is not the bottleneck (the two should agree within
// about 10 %). A Lua script adds the credential and, for creates, a unique name per request.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pinned, pinning, procCpuSeconds } from './lib.js';
import type { Target } from './target.js';

export function wrkAvailable(): boolean {
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    // wrk -v prints its version and exits 1
    return (e as { status?: number }).status === 1;
  }
}

export interface WrkResult { requestsPerSec: number; requests: number; non2xx: number; errors: number; p50ms: number; p99ms: number; clientCpuSeconds: number; seconds: number }

const luaString = (s: string) => JSON.stringify(s); // JSON string syntax is valid Lua for these characters

/** The Lua script: headers, and for creates a body with a name unique per thread and request. */
function script(t: Target, kind: 'get' | 'create', run: string): string {
  const lines = [
    `wrk.headers["Accept"] = "application/json"`,
    t.token ? `wrk.headers["Authorization"] = ${luaString('Bearer ' + t.token)}` : '',
  ];
  if (kind === 'create') {
    lines.push(
      `wrk.method = "POST"`,
      `wrk.headers["Content-Type"] = "application/json"`,
      `local threads = 0`,
      `function setup(thread) threads = threads + 1; thread:set("tid", threads) end`,
      `local n = 0`,
      `function request()`,
      `  n = n + 1`,
      `  local body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"wrk-${run}-' .. tid .. '-' .. n .. '"},"data":{"key":"value"}}'`,
      `  return wrk.format(nil, nil, nil, body)`,
      `end`,
    );
  }
  return lines.filter(Boolean).join('\n') + '\n';
}

/** Parses "1.23ms" / "456.00us" / "2.1s" into milliseconds. */
function ms(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000;
}

/** CPUs in a taskset list ("1", "0-1", "0,2-3"). */
function cpuCount(list: string): number {
  return list.split(',').reduce((n, r) => { const [a, b] = r.split('-').map(Number); return n + (b === undefined ? 1 : b - a + 1); }, 0);
}

/** Runs wrk for `seconds` with `connections` against a GET path or the create path; its own CPU is sampled from /proc. */
export async function runWrk(t: Target, kind: 'get' | 'create', getPath: string | undefined, connections: number, seconds: number, run: string): Promise<WrkResult> {
  if (t.cert) throw new Error('wrk cannot present a client certificate: use a token');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-wrk-'));
  const lua = path.join(dir, 'bench.lua');
  writeFileSync(lua, script(t, kind, run));
  const p = kind === 'get' ? getPath! : `/api/v1/namespaces/${t.namespace}/configmaps`;
  const host = t.host.includes(':') ? `[${t.host}]` : t.host;
  const threads = Math.max(1, Math.min(pinning.load ? cpuCount(pinning.load) : os.availableParallelism(), connections));
  const child = spawn(...pinned(pinning.load, 'wrk', ['-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--latency', '-s', lua, `https://${host}:${t.port}${p}`]), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (out += d));
  // sample wrk's CPU until it exits (its /proc entry is gone after)
  let cpu = 0;
  const timer = setInterval(() => { try { cpu = procCpuSeconds(child.pid!); } catch { /* exited */ } }, 100);
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  clearInterval(timer);
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`wrk exited ${code}: ${out.slice(0, 500)}`);
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  const dur = /requests in ([\d.]+)(ms|s|m)/.exec(out);
  return {
    requestsPerSec: num(/Requests\/sec:\s+([\d.]+)/),
    requests: num(/(\d+) requests in/),
    non2xx: num(/Non-2xx or 3xx responses:\s+(\d+)/),
    errors: (/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1).map(Number).reduce((a, b) => a + b, 0)) ?? 0,
    p50ms: ms(/\s50%\s+(\S+)/.exec(out)?.[1] ?? ''),
    p99ms: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? ''),
    clientCpuSeconds: cpu,
    seconds: dur ? ms(dur[1] + dur[2]) / 1000 : seconds,
  };
}
