// client-go's tools/cache Indexer: objects by the key a KeyFunc gives, and named indexes over
// them, each a function from an object to its one index value (or none), kept as objects come
// and go. What the store holds of every kind is one of these. A unique index (a pod's UID)
// maps a value to its one object: no bucket per object (a Map each: 185 bytes a pod).

const NONE: Iterable<never> = [];

export class Indexer<T, I extends string = string, U extends string = never> {
  private readonly items = new Map<string, T>();
  private readonly names: readonly I[];
  private readonly funcs: readonly ((obj: T) => string | undefined)[];
  /** Per index (in `names` order): value → key → object. */
  private readonly indices: Map<string, Map<string, T>>[];
  private readonly uniqueNames: readonly U[];
  private readonly uniqueFuncs: readonly ((obj: T) => string)[];
  /** Per unique index: value → object. */
  private readonly uniques: Map<string, T>[];

  constructor(
    readonly keyOf: (obj: T) => string,
    indexers: Readonly<Record<I, (obj: T) => string | undefined>> = {} as Record<I, never>,
    unique: Readonly<Record<U, (obj: T) => string>> = {} as Record<U, never>,
  ) {
    this.names = Object.keys(indexers) as I[];
    this.funcs = this.names.map((n) => indexers[n]);
    this.indices = this.names.map(() => new Map());
    this.uniqueNames = Object.keys(unique) as U[];
    this.uniqueFuncs = this.uniqueNames.map((n) => unique[n]);
    this.uniques = this.uniqueNames.map(() => new Map());
  }

  get size(): number { return this.items.size; }
  get(key: string): T | undefined { return this.items.get(key); }
  keys(): Iterable<string> { return this.items.keys(); }
  values(): Iterable<T> { return this.items.values(); }

  /** Stores `obj` in place of the object of its key; returns that one. */
  upsert(obj: T): T | undefined {
    const key = this.keyOf(obj);
    const old = this.items.get(key);
    if (old !== undefined) this.unindex(key, old);
    this.items.set(key, obj);
    for (let i = 0; i < this.uniqueFuncs.length; i++) this.uniques[i]!.set(this.uniqueFuncs[i]!(obj), obj);
    for (let i = 0; i < this.funcs.length; i++) {
      const value = this.funcs[i]!(obj);
      if (value === undefined) continue;
      const index = this.indices[i]!;
      let bucket = index.get(value);
      if (!bucket) index.set(value, (bucket = new Map()));
      bucket.set(key, obj);
    }
    return old;
  }

  /** Removes the object of `key`; returns it. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  /** The objects whose index `name` gives `value`. */
  byIndex(name: I, value: string): Iterable<T> {
    return this.indices[this.names.indexOf(name)]!.get(value)?.values() ?? NONE;
  }

  /** The first object whose index `name` gives `value`. */
  first(name: I, value: string): T | undefined {
    const bucket = this.indices[this.names.indexOf(name)]!.get(value);
    return bucket ? bucket.values().next().value : undefined;
  }

  /** The object whose unique index `name` gives `value`. */
  byUnique(name: U, value: string): T | undefined {
    return this.uniques[this.uniqueNames.indexOf(name)]!.get(value);
  }

  /** The values index `name` holds objects under. */
  indexValues(name: I): Iterable<string> {
    return this.indices[this.names.indexOf(name)]!.keys();
  }

  private unindex(key: string, obj: T): void {
    for (let i = 0; i < this.uniqueFuncs.length; i++) {
      const value = this.uniqueFuncs[i]!(obj);
      if (this.uniques[i]!.get(value) === obj) this.uniques[i]!.delete(value);
    }
    for (let i = 0; i < this.funcs.length; i++) {
      const value = this.funcs[i]!(obj);
      if (value === undefined) continue;
      const index = this.indices[i]!;
      const bucket = index.get(value);
      bucket?.delete(key);
      if (bucket?.size === 0) index.delete(value);
    }
  }
}
