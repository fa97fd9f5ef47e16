import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import t from 'tap'
import { AnyKey, Timestamp, Uuid } from '../../src/domain/schemas.js'
import { accepts, examples } from '../helpers/decider-spec.js'

t.test('Uuid', async (t) => {
  examples(t, accepts(Uuid), [
    ['a UUID', ['0190a0b0-0000-7000-8000-000000000001'], true],
    ['in capitals', ['0190A0B0-0000-7000-8000-00000000000F'], true],
    ['without its dashes', ['0190a0b0000070008000000000000001'], false],
    ['with text around it', [' 0190a0b0-0000-7000-8000-000000000001'], false],
  ])
})

t.test('Timestamp', async (t) => {
  examples(t, accepts(Timestamp), [
    ['ISO 8601 UTC with milliseconds', ['2026-01-02T03:04:05.678Z'], true],
    ['without milliseconds', ['2026-01-02T03:04:05Z'], false],
    ['with an offset', ['2026-01-02T03:04:05.678+01:00'], false],
    ['a date alone', ['2026-01-02'], false],
  ])
})

t.test('AnyKey', async (t) => {
  const values = Type.Record(AnyKey, Type.String())
  const withLineBreak = { 'line\nbreak': 'x', '': 'empty' }
  t.ok(accepts(values)(withLineBreak), 'a record takes a key holding a line break, and the empty key')
  t.same(Value.Clean(values, structuredClone(withLineBreak)), withLineBreak, 'and the event check\'s clean keeps them')
})
