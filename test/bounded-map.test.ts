import t from 'tap'
import { BoundedMap } from '../src/bounded-map.js'

t.test('a bounded map drops its oldest entry to take a new key when full, never for a key it holds', async (t) => {
  const map = new BoundedMap<string, number>(2)
  map.set('a', 1).set('b', 2)
  map.set('a', 10)
  t.same([...map], [['a', 10], ['b', 2]], 'setting a key it holds drops nothing')
  map.set('c', 3)
  t.same([...map], [['b', 2], ['c', 3]], 'a new key drops the oldest')
  map.delete('b')
  map.set('d', 4)
  t.same([...map], [['c', 3], ['d', 4]], 'below its capacity it drops nothing')
})
