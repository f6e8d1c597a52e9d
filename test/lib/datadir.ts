// Helpers of the data-directory tests.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mainJs } from './server.js';

export const run = (args: string[]) => spawnSync(process.execPath, [mainJs, ...args], { encoding: 'utf8', timeout: 30_000 });

export function tmpDir(t: { teardown(fn: () => unknown): void }, mode = 0o700): string {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'capi-dd-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const dir = path.join(parent, 'data');
  mkdirSync(dir);
  chmodSync(dir, mode);
  return dir;
}

