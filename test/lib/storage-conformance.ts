// The storage conformance suite: the behaviour every StorageBackend must have.
// A backend's unit test calls storageConformance(t, name, make); `make(dir)` returns a new, unopened
// backend whose data lives at (or is keyed by) `dir`, so that calling make again with the same dir
// reopens the same data. Every sub-test gets its own fresh dir.
//
// Revisions are checked relative to the revision a fresh store starts at (`R(n)` is the n-th write's):
// 0 for the embedded log, 1 for etcd, whose first write is revision 2.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import type { KV, StorageBackend, StorageEvent, WriteOp, WriteResult } from '../../kernel/contracts/index.js';

type T = Test;
type Make = (dir: string) => StorageBackend | Promise<StorageBackend>;

const enc = (s: string): Uint8Array => Buffer.from(s, 'utf8');
const dec = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8'));

async function collect<V>(it: AsyncIterable<V>): Promise<V[]> {
  const out: V[] = [];
  for await (const v of it) out.push(v);
  return out;
}

/** A plain, comparable view of a KV. */
const kvView = (kv: KV | undefined) => kv && { key: kv.key, value: dec(kv.value), modRevision: kv.modRevision, createRevision: kv.createRevision };
const evView = (e: StorageEvent) => ({ type: e.type, key: e.key, revision: e.revision, value: dec(e.value), createRevision: e.createRevision, prevRevision: e.prevRevision });

/** Writes whose value embeds the revision it was given: "<text>@<rev>". */
const create = (key: string, text = 'v'): WriteOp => ({ type: 'create', key, value: (rev) => enc(`${text}@${rev}`) });
const update = (key: string, expectRevision: number, text = 'u'): WriteOp => ({ type: 'update', key, expectRevision, value: (rev) => enc(`${text}@${rev}`) });
const del = (key: string, expectRevision: number): WriteOp => ({ type: 'delete', key, expectRevision });

function okRev(t: T, r: WriteResult, msg: string): number {
  t.equal(r.ok, true, msg);
  return r.ok ? r.revision : NaN;
}

export function storageConformance(t: T, name: string, make: Make): Promise<unknown> {
  return t.test(`storage conformance: ${name}`, async (t) => {
    /** A fresh dir and an opened backend on it; everything is closed and removed when the sub-test ends. */
    const fresh = async (t: T) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'capi-store-'));
      const opened = new Set<StorageBackend>();
      const open = async () => {
        const b = await make(dir);
        await b.open();
        opened.add(b);
        return b;
      };
      const close = async (b: StorageBackend) => {
        opened.delete(b);
        await b.close();
      };
      t.teardown(async () => {
        for (const b of opened) await b.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      });
      const b = await open();
      const r0 = b.currentRevision();
      /** The revision of the n-th write to this fresh store. */
      const R = (n: number) => r0 + n;
      return { dir, open, close, b, R };
    };

    await t.test('an empty store', async (t) => {
      const { b } = await fresh(t);
      t.ok(Number.isSafeInteger(b.currentRevision()) && b.currentRevision() >= 0, 'currentRevision starts at the store\'s first revision');
      t.equal(b.compactedRevision(), 0, 'compactedRevision starts at 0');
      t.equal(await b.get('/a'), undefined);
      t.same(await b.range(''), []);
      t.same(await b.range('/a/'), []);
      t.same(await collect(b.all()), []);
      t.same(await collect(b.history(0)), []);
      t.same(await collect(b.history(b.currentRevision())), []);
      if (b.ready) t.equal(b.ready(), true, 'ready once open');
    });

    await t.test('create, update, delete and their refusals', async (t) => {
      const { b, R } = await fresh(t);
      const seen: number[] = [];
      const c1 = await b.write({ type: 'create', key: '/k/a', value: (rev) => { seen.push(rev); return enc(`a@${rev}`); } });
      t.equal(okRev(t, c1, 'create'), R(1), 'the first write is the next revision');
      t.equal(c1.ok && c1.createRevision, R(1), 'a created key has createRevision = its revision');
      if (c1.ok && c1.value !== undefined) t.equal(dec(c1.value), `a@${R(1)}`, 'returned value is the stored value');
      t.equal(seen.length, 1, 'the value callback ran once');
      t.equal(b.currentRevision(), R(1));
      t.same(kvView(await b.get('/k/a')), { key: '/k/a', value: `a@${R(1)}`, modRevision: R(1), createRevision: R(1) }, 'the stored value carries the revision the write reports, as modRevision');

      const dup = await b.write(create('/k/a', 'again'));
      t.equal(dup.ok, false);
      t.equal(!dup.ok && dup.reason, 'exists', 'create of an existing key: exists');
      t.equal(b.currentRevision(), R(1), 'a refused write takes no revision');
      t.equal(dec((await b.get('/k/a'))?.value), `a@${R(1)}`, 'a refused create changes nothing');

      const u1 = await b.write(update('/k/a', R(1)));
      t.equal(okRev(t, u1, 'update with the current revision'), R(2), 'revision goes up by one');
      t.equal(u1.ok && u1.createRevision, R(1), 'update keeps createRevision');
      if (u1.ok && u1.value !== undefined) t.equal(dec(u1.value), `u@${R(2)}`, 'returned value is the stored value');
      t.same(kvView(await b.get('/k/a')), { key: '/k/a', value: `u@${R(2)}`, modRevision: R(2), createRevision: R(1) });

      const stale = await b.write(update('/k/a', R(1), 'stale'));
      t.equal(!stale.ok && stale.reason, 'conflict', 'update with a stale expectRevision: conflict');
      t.same(!stale.ok && kvView(stale.current), { key: '/k/a', value: `u@${R(2)}`, modRevision: R(2), createRevision: R(1) }, 'conflict carries the current value');
      t.equal(b.currentRevision(), R(2));

      const future = await b.write(update('/k/a', R(99), 'future'));
      t.equal(!future.ok && future.reason, 'conflict', 'an expectRevision that never existed: conflict');

      const missingU = await b.write(update('/k/none', R(1)));
      t.equal(!missingU.ok && missingU.reason, 'not-found', 'update of a missing key: not-found');
      const missingU0 = await b.write(update('/k/none', 0));
      t.equal(!missingU0.ok && missingU0.reason, 'not-found', 'unconditional update of a missing key: not-found');
      const missingD = await b.write(del('/k/none', 0));
      t.equal(!missingD.ok && missingD.reason, 'not-found', 'delete of a missing key: not-found');
      t.equal(b.currentRevision(), R(2), 'refusals take no revision');

      const u0 = await b.write(update('/k/a', 0, 'uncond'));
      t.equal(okRev(t, u0, 'expectRevision 0 is unconditional'), R(3));
      t.equal(u0.ok && u0.createRevision, R(1));
      t.same(kvView(await b.get('/k/a')), { key: '/k/a', value: `uncond@${R(3)}`, modRevision: R(3), createRevision: R(1) });

      const staleD = await b.write(del('/k/a', R(2)));
      t.equal(!staleD.ok && staleD.reason, 'conflict', 'delete with a stale expectRevision: conflict');
      t.equal(!staleD.ok && staleD.current?.modRevision, R(3), 'with the current value');
      t.equal(dec((await b.get('/k/a'))?.value), `uncond@${R(3)}`, 'a refused delete changes nothing');

      const d = await b.write(del('/k/a', R(3)));
      t.equal(okRev(t, d, 'delete with the current revision'), R(4));
      t.equal(d.ok && d.createRevision, R(1), 'delete reports the createRevision of what it removed');
      t.equal(await b.get('/k/a'), undefined, 'gone after delete');
      t.equal(b.currentRevision(), R(4));

      const again = await b.write(create('/k/a', 'reborn'));
      t.equal(okRev(t, again, 'create after delete'), R(5));
      t.equal(again.ok && again.createRevision, R(5), 'a re-created key has a new createRevision');
      const d0 = await b.write(del('/k/a', 0));
      t.equal(okRev(t, d0, 'expectRevision 0 delete is unconditional'), R(6));
      t.equal(await b.get('/k/a'), undefined);
      t.equal(b.currentRevision(), R(6));
    });

    await t.test('a value callback that throws fails the write and takes no revision', async (t) => {
      const { b, R } = await fresh(t);
      await b.write(create('/k/a'));
      let pending: Promise<WriteResult> | undefined;
      try {
        pending = b.write({ type: 'create', key: '/k/b', value: () => { throw new Error('boom'); } });
      } catch {
        t.fail('write threw synchronously instead of returning a rejected promise');
      }
      if (pending) await t.rejects(pending, { message: 'boom' }, 'the write rejects with the callback error');
      try {
        await b.write({ type: 'update', key: '/k/a', expectRevision: R(1), value: () => { throw new Error('boom'); } });
      } catch { /* expected */ }
      t.equal(b.currentRevision(), R(1), 'no revision taken');
      t.equal(await b.get('/k/b'), undefined, 'nothing stored');
      t.equal(dec((await b.get('/k/a'))?.value), `v@${R(1)}`, 'the update did not happen');
      const next = await b.write(create('/k/c'));
      t.equal(okRev(t, next, 'the next write'), R(2), 'the next write gets the next revision: no gap');
      t.same((await collect(b.history(0))).map((e) => e.revision), [R(1), R(2)], 'history has no hole');
    });

    await t.test('get, range and all', async (t) => {
      const { b } = await fresh(t);
      // written out of key order on purpose
      const keys = ['/r/b/1', '/r/a/3', '/r/a0', '/r/a/1', '/r/ab/1', '/r/a/2', '/r/a', '/s/x', '/r/a/\u{1F600}', '/r/a/\u00e9'];
      const revs = new Map<string, number>();
      for (const k of keys) revs.set(k, okRev(t, await b.write(create(k, k)), `create ${k}`));
      const sorted = (ks: string[]) => [...ks].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      const names = (kvs: KV[]) => kvs.map((kv) => kv.key);

      const g = await b.get('/r/a/2');
      t.same(kvView(g), { key: '/r/a/2', value: `/r/a/2@${revs.get('/r/a/2')}`, modRevision: revs.get('/r/a/2'), createRevision: revs.get('/r/a/2') });
      t.equal(await b.get('/r/a/'), undefined, 'get is exact, not a prefix match');

      const underA = sorted(keys.filter((k) => k.startsWith('/r/a/')));
      t.same(names(await b.range('/r/a/')), underA, 'prefix range, in key order, including non-ASCII keys');
      t.same(names(await b.range('/r/a')), sorted(keys.filter((k) => k.startsWith('/r/a'))), 'a prefix is a string prefix, not a path prefix');
      t.same(names(await b.range('/r/')), sorted(keys.filter((k) => k.startsWith('/r/'))), 'nothing outside the prefix');
      t.same(names(await b.range('')), sorted(keys), 'the empty prefix is everything');
      t.same(names(await b.range('/q/')), [], 'no keys under the prefix');
      t.same(names(await b.range('/r/a/', { limit: 2 })), underA.slice(0, 2), 'limit');
      t.same(names(await b.range('/r/a/', { startKey: '/r/a/2' })), underA.slice(underA.indexOf('/r/a/2')), 'startKey is inclusive');
      t.same(names(await b.range('/r/a/', { startKey: '/r/a/20' })), underA.filter((k) => Buffer.compare(Buffer.from(k), Buffer.from('/r/a/20')) >= 0), 'startKey need not exist');
      t.same(names(await b.range('/r/a/', { startKey: '/r/a/2', limit: 1 })), ['/r/a/2'], 'startKey with limit');
      t.same(names(await b.range('/r/a/', { startKey: '/r/' })), underA, 'a startKey before the prefix is the prefix start');
      t.same(names(await b.range('/r/a/', { startKey: '/r/b' })), [], 'a startKey after the prefix yields nothing');
      for (const kv of await b.range('/r/')) {
        t.equal(dec(kv.value), `${kv.key}@${revs.get(kv.key)}`, `value of ${kv.key}`);
        t.equal(kv.modRevision, revs.get(kv.key));
        t.equal(kv.createRevision, revs.get(kv.key));
      }

      // update and delete are reflected everywhere
      const u = okRev(t, await b.write(update('/r/a/1', revs.get('/r/a/1')!)), 'update');
      okRev(t, await b.write(del('/r/a/3', revs.get('/r/a/3')!)), 'delete');
      const ra = await b.range('/r/a/');
      t.notOk(names(ra).includes('/r/a/3'), 'a deleted key leaves range');
      t.same(kvView(ra.find((kv) => kv.key === '/r/a/1')), { key: '/r/a/1', value: `u@${u}`, modRevision: u, createRevision: revs.get('/r/a/1') });

      const all = await collect(b.all());
      t.same(sorted(names(all)), sorted(keys.filter((k) => k !== '/r/a/3')), 'all() yields every current key once');
      t.same(kvView(all.find((kv) => kv.key === '/r/a/1')), kvView(ra.find((kv) => kv.key === '/r/a/1')), 'all() has current values');
    });

    await t.test('history', async (t) => {
      const { b, R } = await fresh(t);
      okRev(t, await b.write(create('/h/a')), 'rev 1');
      okRev(t, await b.write(create('/h/b')), 'rev 2');
      okRev(t, await b.write(update('/h/a', R(1))), 'rev 3');
      okRev(t, await b.write(del('/h/b', R(2))), 'rev 4');
      okRev(t, await b.write(create('/other/c')), 'rev 5');
      okRev(t, await b.write(update('/h/a', R(3), 'w')), 'rev 6');
      await b.write(create('/h/a')); // refused: no event
      const expected = [
        { type: 'ADDED', key: '/h/a', revision: R(1), value: `v@${R(1)}`, createRevision: R(1), prevRevision: 0 },
        { type: 'ADDED', key: '/h/b', revision: R(2), value: `v@${R(2)}`, createRevision: R(2), prevRevision: 0 },
        { type: 'MODIFIED', key: '/h/a', revision: R(3), value: `u@${R(3)}`, createRevision: R(1), prevRevision: R(1) },
        { type: 'DELETED', key: '/h/b', revision: R(4), value: `v@${R(2)}`, createRevision: R(2), prevRevision: R(2) },
        { type: 'ADDED', key: '/other/c', revision: R(5), value: `v@${R(5)}`, createRevision: R(5), prevRevision: 0 },
        { type: 'MODIFIED', key: '/h/a', revision: R(6), value: `w@${R(6)}`, createRevision: R(1), prevRevision: R(3) },
      ];
      t.same((await collect(b.history(R(0)))).map(evView), expected, 'everything after the start, in order; DELETED carries the last value and prevRevision');
      for (const n of [1, 2, 3, 5]) {
        t.same((await collect(b.history(R(n)))).map(evView), expected.filter((e) => e.revision > R(n)), `exactly the events after the ${n}th write`);
      }
      t.same(await collect(b.history(R(6))), [], 'nothing after the current revision');
      t.same((await collect(b.history(R(0), '/h/'))).map(evView), expected.filter((e) => e.key.startsWith('/h/')), 'prefix filter');
      t.same((await collect(b.history(R(3), '/h/'))).map(evView), expected.filter((e) => e.key.startsWith('/h/') && e.revision > R(3)), 'prefix filter after a revision');
      t.same(await collect(b.history(R(0), '/nothing/')), [], 'no events under the prefix');
    });

    await t.test('compaction', async (t) => {
      const { b, R, open, close } = await fresh(t);
      for (let i = 1; i <= 5; i++) okRev(t, await b.write(create(`/c/${i}`)), `create ${i}`);
      okRev(t, await b.write(update('/c/1', R(1))), 'rev 6');
      okRev(t, await b.write(del('/c/2', R(2))), 'rev 7');
      await b.compact(R(4));
      t.equal(b.compactedRevision(), R(4), 'compactedRevision moves to the compacted revision');
      for (const after of [0, R(1), R(3)]) {
        let code: unknown;
        try {
          await collect(b.history(after));
        } catch (e) {
          code = (e as { code?: unknown }).code;
        }
        t.equal(code, 410, `history after ${after} (below the compacted revision) throws a 410 StatusError`);
      }
      t.same((await collect(b.history(R(4)))).map((e) => e.revision), [R(5), R(6), R(7)], 'history from the compacted revision on is whole');
      t.same((await collect(b.history(R(5), '/c/'))).map((e) => e.revision), [R(6), R(7)]);
      t.same(kvView(await b.get('/c/3')), { key: '/c/3', value: `v@${R(3)}`, modRevision: R(3), createRevision: R(3) }, 'current values older than the compaction survive');
      t.same(kvView(await b.get('/c/1')), { key: '/c/1', value: `u@${R(6)}`, modRevision: R(6), createRevision: R(1) });
      t.same((await b.range('/c/')).map((kv) => kv.key), ['/c/1', '/c/3', '/c/4', '/c/5'], 'range unaffected');
      t.equal((await collect(b.all())).length, 4, 'all() unaffected');
      t.equal(b.currentRevision(), R(7), 'currentRevision unaffected');

      await b.compact(R(2));
      t.equal(b.compactedRevision(), R(4), 'compacting below the compacted revision changes nothing');
      const u = await b.write(update('/c/3', R(3)));
      t.equal(okRev(t, u, 'writes go on after compaction'), R(8));
      t.equal(u.ok && u.createRevision, R(3), 'createRevision survives compaction of its event');

      await close(b);
      const b2 = await open();
      t.equal(b2.compactedRevision(), R(4), 'compactedRevision survives reopen');
      t.equal(b2.currentRevision(), R(8));
      let code: unknown;
      try { await collect(b2.history(R(1))); } catch (e) { code = (e as { code?: unknown }).code; }
      t.equal(code, 410, 'compacted history stays gone after reopen');
      t.same((await collect(b2.history(R(4)))).map((e) => e.revision), [R(5), R(6), R(7), R(8)]);
    });

    await t.test('onCommit: every event once, in order, before the write resolves', async (t) => {
      const { b, R } = await fresh(t);
      const got: StorageEvent[] = [];
      let calls = 0;
      let revAtCall = true;
      b.onCommit((events, revision) => {
        calls++;
        for (const e of events) got.push(e);
        if (events.length && b.currentRevision() < events[events.length - 1].revision) revAtCall = false;
        if (events.length && revision < events[events.length - 1].revision) revAtCall = false;
      });
      const check = async (op: WriteOp) => {
        const r = await b.write(op);
        if (r.ok) t.ok(got.some((e) => e.revision === r.revision), `event ${r.revision} delivered before the write resolved`);
        return r;
      };
      await check(create('/o/a'));
      await check(update('/o/a', R(1)));
      await check(create('/o/a')); // refused
      await check(del('/o/a', 0));
      t.same(got.map(evView), [
        { type: 'ADDED', key: '/o/a', revision: R(1), value: `v@${R(1)}`, createRevision: R(1), prevRevision: 0 },
        { type: 'MODIFIED', key: '/o/a', revision: R(2), value: `u@${R(2)}`, createRevision: R(1), prevRevision: R(1) },
        { type: 'DELETED', key: '/o/a', revision: R(3), value: `u@${R(2)}`, createRevision: R(1), prevRevision: R(2) },
      ], 'listener events equal the history');
      t.same(got.map(evView), (await collect(b.history(R(0)))).map(evView), 'and history agrees');
      t.ok(calls >= 1 && calls <= 3, 'no empty or duplicate deliveries');
      t.ok(revAtCall, 'currentRevision and the reported revision already cover the events the listener gets');
    });

    await t.test('200 concurrent writes', async (t) => {
      const { b } = await fresh(t);
      okRev(t, await b.write(create('/p/seed')), 'seed');
      const got: StorageEvent[] = [];
      b.onCommit((events) => { for (const e of events) got.push(e); });
      const start = b.currentRevision();
      const N = 200;
      const results = await Promise.all(Array.from({ length: N }, (_, i) => {
        const op = i % 10 === 9 ? update('/p/seed', 0, `u${i}`) : create(`/p/${String(i).padStart(3, '0')}`, `c${i}`);
        return b.write(op).then((r) => {
          if (r.ok && !got.some((e) => e.revision === r.revision)) t.fail(`write ${i} resolved before its event was delivered`);
          return r;
        });
      }));
      t.ok(results.every((r) => r.ok), 'all succeed');
      const revs = results.map((r) => (r.ok ? r.revision : -1));
      t.equal(new Set(revs).size, N, 'distinct revisions');
      t.same([...revs].sort((x, y) => x - y), Array.from({ length: N }, (_, i) => start + 1 + i), 'exactly the next 200 revisions');
      t.equal(b.currentRevision(), start + N);
      t.same(got.map((e) => e.revision), Array.from({ length: N }, (_, i) => start + 1 + i), 'the listener saw them all, once, in order');
      const hist = await collect(b.history(start));
      t.same(hist.map(evView), got.map(evView), 'history matches what the listener saw');
      // each result's value is what the callback produced for its revision
      for (const r of results) if (r.ok && r.value !== undefined) t.match(dec(r.value), new RegExp(`@${r.revision}$`));
      t.equal((await b.range('/p/')).length, 1 + N - N / 10);
    });

    await t.test('concurrent writers on one key: exactly one wins', async (t) => {
      const { b, R } = await fresh(t);
      const creates = await Promise.all(Array.from({ length: 20 }, (_, i) => b.write(create('/x/one', `c${i}`))));
      t.equal(creates.filter((r) => r.ok).length, 1, 'one create wins');
      t.ok(creates.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'exists'), 'the others: exists');
      const rev = b.currentRevision();
      t.equal(rev, R(1));
      const updates = await Promise.all(Array.from({ length: 20 }, (_, i) => b.write(update('/x/one', rev, `u${i}`))));
      t.equal(updates.filter((r) => r.ok).length, 1, 'one conditional update wins');
      t.ok(updates.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'conflict'), 'the others: conflict');
      const deletes = await Promise.all(Array.from({ length: 5 }, () => b.write(del('/x/one', R(2)))));
      t.equal(deletes.filter((r) => r.ok).length, 1, 'one delete wins');
      t.ok(deletes.filter((r) => !r.ok).every((r) => !r.ok && (r.reason === 'not-found' || r.reason === 'conflict')), 'the others: not-found');
      t.equal(b.currentRevision(), R(3));
    });

    await t.test('close and reopen', async (t) => {
      const { b, R, open, close } = await fresh(t);
      for (let i = 0; i < 10; i++) okRev(t, await b.write(create(`/d/${i}`, `x${i}`)), `create ${i}`);
      okRev(t, await b.write(update('/d/3', R(4))), 'update');
      okRev(t, await b.write(del('/d/5', R(6))), 'delete');
      // a burst still in flight when close is called must be committed, not lost
      const burst = Array.from({ length: 20 }, (_, i) => b.write(create(`/e/${i}`)));
      const closing = close(b);
      const burstResults = await Promise.all(burst);
      await closing;
      t.ok(burstResults.every((r) => r.ok), 'writes in flight at close complete');
      const before = { rev: R(32), hist: 32 };

      const b2 = await open();
      t.equal(b2.currentRevision(), before.rev, 'the revision survives');
      t.same(kvView(await b2.get('/d/3')), { key: '/d/3', value: `u@${R(11)}`, modRevision: R(11), createRevision: R(4) }, 'current values survive');
      t.equal(await b2.get('/d/5'), undefined, 'deletes survive');
      t.equal((await b2.range('/d/')).length, 9);
      t.equal((await b2.range('/e/')).length, 20);
      t.equal((await collect(b2.all())).length, 29);
      const hist = await collect(b2.history(R(0)));
      t.same(hist.map((e) => e.revision), Array.from({ length: before.hist }, (_, i) => R(i + 1)), 'history survives');
      t.same(evView(hist[11]), { type: 'DELETED', key: '/d/5', revision: R(12), value: `x5@${R(6)}`, createRevision: R(6), prevRevision: R(6) });

      const got: StorageEvent[] = [];
      b2.onCommit((events) => { for (const e of events) got.push(e); });
      const n = await b2.write(create('/d/new'));
      t.equal(okRev(t, n, 'write after reopen'), before.rev + 1, 'the revision continues upward');
      const u = await b2.write(update('/d/3', R(11)));
      t.equal(u.ok && u.createRevision, R(4), 'createRevision survives reopen');
      t.same(got.map((e) => e.revision), [before.rev + 1, before.rev + 2], 'the new listener sees only new events');

      await close(b2);
      const b3 = await open();
      t.equal(b3.currentRevision(), before.rev + 2, 'and survives a second reopen');
      await close(b3);
    });
  });
}
