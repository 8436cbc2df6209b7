// Recycled records in typed-array columns: one slot per pending item (a group of writes, a post on
// its way to the log), nothing allocated per item. A subclass declares its columns as fields and
// names them to the constructor; they double when the slots run out.

type Column = Float64Array | Int32Array;

export abstract class RecordPool {
  private readonly freeList: number[] = [];
  private used = 0;

  protected constructor(private readonly columns: readonly string[]) {}

  /** A free slot (the columns grown when every slot is taken). */
  protected slot(): number {
    if (this.freeList.length > 0) return this.freeList.pop()!;
    const table = this as unknown as Record<string, Column>;
    if (this.used === table[this.columns[0]].length) {
      for (const k of this.columns) {
        const old = table[k];
        const grown = old instanceof Int32Array ? new Int32Array(old.length * 2) : new Float64Array(old.length * 2);
        grown.set(old);
        table[k] = grown;
      }
    }
    return this.used++;
  }

  release(i: number): void {
    this.freeList.push(i);
  }
}
