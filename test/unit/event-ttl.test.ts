// The write time an event records, from which the event-ttl controller counts after a restart.
import t from 'tap';
import { recordedWrite } from '../../plugins/controllers/event-ttl/index.js';

t.test('the latest of the times an event records', async (t) => {
  const ms = (s: string) => Date.parse(s);
  t.equal(recordedWrite({ metadata: { creationTimestamp: '2024-01-01T00:00:00Z' } }), ms('2024-01-01T00:00:00Z'));
  t.equal(recordedWrite({
    metadata: { creationTimestamp: '2024-01-01T00:00:00Z', managedFields: [{ time: '2024-01-01T00:05:00Z' }, { time: '2024-01-01T00:03:00Z' }] },
    lastTimestamp: '2024-01-01T00:04:00Z',
  }), ms('2024-01-01T00:05:00Z'), 'a managed-fields time (the last update)');
  t.equal(recordedWrite({ metadata: {}, eventTime: '2024-01-02T00:00:00.000000Z', series: { lastObservedTime: '2024-01-03T00:00:00.000000Z' } }), ms('2024-01-03T00:00:00Z'), 'series.lastObservedTime');
  t.equal(recordedWrite({ metadata: {}, lastTimestamp: null, eventTime: 'garbage' }), 0, 'nothing readable: 0 (due at once)');
});
