// The data directory: private to this server's user, used by one server at a time, and bound to the
// brand it was created with (its stored objects carry that brand's names).
import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'cluster-apiserver.pid';
export const BRAND_FILE = 'brand';
export const INSECURE_FLAG = '--insecure-data-dir-permissions';

export interface DataDirOptions {
  brand: string;
  /** Serve a data directory that others can read (the flag above). */
  allowInsecure?: boolean;
}

/** Start time of a process (clock ticks since boot), to tell a live owner from a reused pid; undefined off Linux or when gone. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const mode = (m: number) => '0' + (m & 0o777).toString(8);

/** Owner bits only: files 0600, directories 0700, for everything under dir that allows more. */
function tighten(dir: string): void {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) continue;
    if (st.mode & 0o077) chmodSync(p, st.isDirectory() ? 0o700 : 0o600);
    if (st.isDirectory()) tighten(p);
  }
}

export interface DataDirLock {
  release(): void;
}

/**
 * Prepares the data directory before anything is written to it: everything this process creates from
 * now on is private (umask 077, which LevelDB's files get too), the directory must not be open to
 * others, it is locked for this process, and its brand matches. Throws with a message for the operator.
 */
export function prepareDataDir(dir: string, opts: DataDirOptions): DataDirLock {
  process.umask(0o077);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  if (!st.isDirectory()) throw new Error(`the data directory ${dir} is not a directory`);
  if (st.mode & 0o077 && !opts.allowInsecure) {
    throw new Error(`the data directory ${dir} is open to other users (mode ${mode(st.mode)}); it holds the store and private keys. ` +
      `Run "chmod 700 ${dir}", or start with ${INSECURE_FLAG} to serve it anyway`);
  }
  const lock = lockDataDir(dir);
  try {
    if (!opts.allowInsecure) tighten(dir);
    checkBrand(dir, opts.brand);
  } catch (e) {
    lock.release();
    throw e;
  }
  return lock;
}

/**
 * Takes the data directory for this process: a pid file created exclusively. A file left by a process
 * that is gone (or whose pid now belongs to another process) is taken over.
 */
export function lockDataDir(dir: string): DataDirLock {
  const file = path.join(dir, LOCK_FILE);
  const me = `${process.pid} ${startTime(process.pid) ?? ''}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, me);
      closeSync(fd);
      let released = false;
      const lock = {
        release() {
          if (released) return;
          released = true;
          process.off('exit', lock.release);
          try { if (readFileSync(file, 'utf8') === me) unlinkSync(file); } catch { /* already gone */ }
        },
      };
      // released at exit too; a stopped server's lock (several in one process) leaves no listener behind
      process.once('exit', lock.release);
      return lock;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let text = '';
    try { text = readFileSync(file, 'utf8'); } catch { continue; }
    const [pidText, started] = text.trim().split(' ');
    const pid = Number(pidText);
    const owner = Number.isSafeInteger(pid) && pid > 0 && alive(pid) && (!started || startTime(pid) === undefined || startTime(pid) === started);
    if (owner) throw new Error(`the data directory ${dir} is in use by process ${pid} (${file}); stop that server or choose another --data-dir`);
    try { unlinkSync(file); } catch { /* another starter took it over first */ }
  }
  throw new Error(`cannot lock the data directory ${dir} (${file})`);
}

/** The brand is written at the first start; a later start with another brand is refused. */
function checkBrand(dir: string, brand: string): void {
  const file = path.join(dir, BRAND_FILE);
  let recorded: string | undefined;
  try { recorded = readFileSync(file, 'utf8').trim(); } catch { /* first start */ }
  if (recorded === undefined) {
    const fd = openSync(file, 'w', 0o600);
    writeSync(fd, brand + '\n');
    closeSync(fd);
    return;
  }
  if (recorded !== brand) {
    throw new Error(`the data directory ${dir} was created with --brand ${recorded}; it cannot be served with --brand ${brand} ` +
      `(its stored objects use the ${recorded} names). Start with --brand ${recorded} or choose another --data-dir`);
  }
}
