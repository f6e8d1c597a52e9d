// The cron job controller's schedule parser: the next times of five-field expressions, the
// descriptors, @every, time zones (spec.timeZone and a CRON_TZ= prefix), and refused expressions;
// and how many times were missed since the last one.
import t from 'tap';
import { formatInZone, parseDuration, parseSchedule } from '../../plugins/controllers/cronjob/schedule.js';
import { mostRecentTime } from '../../plugins/controllers/cronjob/index.js';

const at = (s: string) => Date.parse(s);
const iso = (ms: number | undefined) => (ms === undefined ? 'none' : new Date(ms).toISOString().replace('.000Z', 'Z'));

/** The first `n` times after `from`. */
function times(spec: string, from: string, n: number, tz?: string): string[] {
  const s = parseSchedule(spec, tz);
  const out: string[] = [];
  let cur: number | undefined = at(from);
  for (let i = 0; i < n && cur !== undefined; i++) out.push(iso((cur = s.next(cur))));
  return out;
}

t.test('five-field expressions', async (t) => {
  // 2026-11-28 is a Saturday
  t.same(times('* * * * *', '2026-11-28T00:53:20Z', 2), ['2026-11-28T00:54:00Z', '2026-11-28T00:55:00Z'], 'every minute, strictly after');
  t.same(times('* * * * *', '2026-11-28T00:54:00Z', 1), ['2026-11-28T00:55:00Z'], 'a time exactly on the minute is not its own next');
  t.same(times('*/15 * * * *', '2026-11-28T00:53:00Z', 3), ['2026-11-28T01:00:00Z', '2026-11-28T01:15:00Z', '2026-11-28T01:30:00Z']);
  t.same(times('5,10-12 3 * * *', '2026-11-28T03:10:30Z', 3), ['2026-11-28T03:11:00Z', '2026-11-28T03:12:00Z', '2026-11-29T03:05:00Z'], 'lists and ranges');
  t.same(times('0 9-17/4 * * *', '2026-11-28T10:00:00Z', 3), ['2026-11-28T13:00:00Z', '2026-11-28T17:00:00Z', '2026-11-29T09:00:00Z'], 'a stepped range');
  t.same(times('30 2/10 * * *', '2026-11-28T00:00:00Z', 3), ['2026-11-28T02:30:00Z', '2026-11-28T12:30:00Z', '2026-11-28T22:30:00Z'], 'a/step runs to the maximum');
  t.same(times('0 0 * * MON-wed', '2026-11-28T00:00:00Z', 3), ['2026-11-30T00:00:00Z', '2026-12-01T00:00:00Z', '2026-12-02T00:00:00Z'], 'day names, any case');
  t.same(times('0 12 1 FEB,aug *', '2026-11-28T00:00:00Z', 2), ['2027-02-01T12:00:00Z', '2027-08-01T12:00:00Z'], 'month names');
  t.same(times('0 0 29 2 *', '2026-11-28T00:00:00Z', 1), ['2028-02-29T00:00:00Z'], 'a leap day');
  t.same(times('0 0 13 * 5', '2026-11-28T00:00:00Z', 3), ['2026-12-04T00:00:00Z', '2026-12-11T00:00:00Z', '2026-12-13T00:00:00Z'], 'both day fields restricted: either matches');
  t.same(times('0 0 13 * *', '2026-11-28T00:00:00Z', 1), ['2026-12-13T00:00:00Z'], 'day of week * : day of month alone');
  t.same(times('0 0 ? * 0', '2026-11-28T00:00:00Z', 1), ['2026-11-29T00:00:00Z'], '? as *');
  t.same(times('0 0 */2 * 1', '2026-11-28T00:00:00Z', 2), ['2026-11-29T00:00:00Z', '2026-11-30T00:00:00Z'], 'a stepped star is a restriction (either matches)');
  t.same(times('0 0 31 4 *', '2026-11-28T00:00:00Z', 1), ['none'], 'a day that never comes');
});

t.test('descriptors and @every', async (t) => {
  const from = '2026-11-28T00:53:20Z';
  t.same(times('@hourly', from, 1), ['2026-11-28T01:00:00Z']);
  t.same(times('@daily', from, 1), ['2026-11-29T00:00:00Z']);
  t.same(times('@midnight', from, 1), ['2026-11-29T00:00:00Z']);
  t.same(times('@weekly', from, 1), ['2026-11-29T00:00:00Z'], 'Sunday');
  t.same(times('@monthly', from, 1), ['2026-12-01T00:00:00Z']);
  t.same(times('@yearly', from, 1), ['2027-01-01T00:00:00Z']);
  t.same(times('@annually', from, 1), ['2027-01-01T00:00:00Z']);
  t.same(times('@every 1h30m', '2026-11-28T00:53:20.500Z', 2), ['2026-11-28T02:23:20Z', '2026-11-28T03:53:20Z']);
  t.equal(parseDuration('1.5s'), 1500);
  t.throws(() => parseDuration('5 minutes'));
});

t.test('time zones', async (t) => {
  // Berlin is UTC+1 in November, UTC+2 in summer
  t.same(times('0 9 * * *', '2026-11-28T00:00:00Z', 1, 'Europe/Berlin'), ['2026-11-28T08:00:00Z']);
  t.same(times('CRON_TZ=America/New_York 30 6 * * *', '2026-11-28T00:00:00Z', 1), ['2026-11-28T11:30:00Z'], 'a CRON_TZ prefix');
  t.same(times('TZ=Asia/Kolkata 0 0 * * *', '2026-11-28T00:00:00Z', 1), ['2026-11-28T18:30:00Z'], 'a TZ prefix, half-hour offset');
  t.same(times('0 9 * * *', '2027-03-27T12:00:00Z', 2, 'Europe/Berlin'), ['2027-03-28T07:00:00Z', '2027-03-29T07:00:00Z'], 'across the change to summer time');
  t.same(times('30 2 * * *', '2027-03-27T12:00:00Z', 1, 'Europe/Berlin'), ['2027-03-28T01:30:00Z'], 'a time in the gap runs an hour later');
  t.equal(formatInZone(at('2026-11-28T08:00:00Z'), 'Europe/Berlin'), '2026-11-28T09:00:00+01:00');
  t.equal(formatInZone(at('2026-11-28T18:30:00Z'), 'America/St_Johns'), '2026-11-28T15:00:00-03:30');
  t.equal(formatInZone(at('2026-11-28T08:00:00.700Z')), '2026-11-28T08:00:00Z');
  t.throws(() => parseSchedule('* * * * *', 'Mars/Olympus'), /unknown time zone Mars\/Olympus/);
});

t.test('refused expressions', async (t) => {
  t.throws(() => parseSchedule('* * * *'), /expected exactly 5 fields, found 4/);
  t.throws(() => parseSchedule('60 * * * *'), /end of range \(60\) above maximum \(59\)/);
  t.throws(() => parseSchedule('* * 0 * *'), /beginning of range \(0\) below minimum \(1\)/);
  t.throws(() => parseSchedule('* * * * 7'), /above maximum \(6\)/);
  t.throws(() => parseSchedule('5-2 * * * *'), /beyond end of range/);
  t.throws(() => parseSchedule('*/0 * * * *'), /step of range should be a positive number/);
  t.throws(() => parseSchedule('* * * FOO *'), /failed to parse int from FOO/);
  t.throws(() => parseSchedule('@fortnightly'), /unrecognized descriptor/);
});

t.test('missed times', async (t) => {
  const s = parseSchedule('* * * * *');
  const cj = (extra: Record<string, unknown>) => ({ metadata: { creationTimestamp: '2026-11-28T00:00:30Z' }, ...extra });
  t.same(mostRecentTime(cj({}), at('2026-11-28T00:00:50Z'), s, true), { earliest: at('2026-11-28T00:00:30Z'), recent: undefined, missed: 0 }, 'nothing due yet');
  t.same(mostRecentTime(cj({}), at('2026-11-28T00:03:10Z'), s, true), { earliest: at('2026-11-28T00:00:30Z'), recent: at('2026-11-28T00:03:00Z'), missed: 3 }, 'the latest of three');
  const last = cj({ status: { lastScheduleTime: '2026-11-28T00:02:00Z' } });
  t.equal(mostRecentTime(last, at('2026-11-28T00:03:10Z'), s, true).missed, 1, 'counted from lastScheduleTime');
  const deadline = cj({ spec: { startingDeadlineSeconds: 5 } });
  t.equal(mostRecentTime(deadline, at('2026-11-28T00:03:10Z'), s, true).recent, undefined, 'past startingDeadlineSeconds: not started');
  t.equal(mostRecentTime(deadline, at('2026-11-28T00:03:04Z'), s, true).recent, at('2026-11-28T00:03:00Z'), 'within startingDeadlineSeconds');
  const long = mostRecentTime(cj({}), at('2027-11-28T10:07:10Z'), s, true);
  t.ok(long.missed > 100, 'more than 100 missed');
  t.equal(long.recent, at('2027-11-28T10:07:00Z'), 'the latest time after a long gap');
});
