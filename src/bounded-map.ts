/** A Map of at most `capacity` entries: setting a new key when it is full drops the oldest entry first. */
export class BoundedMap<K, V> extends Map<K, V> {
  private readonly capacity: number

  constructor(capacity: number) {
    super()
    this.capacity = capacity
  }

  override set(key: K, value: V): this {
    if (this.size >= this.capacity && !this.has(key)) this.delete(this.keys().next().value!)
    return super.set(key, value)
  }
}
