// Pending timeline writes, one record per group of a post's batches that land together: followers
// in CSR range [start, end) of the author. Records are recycled; nothing is allocated per post.

export class WriteGroups {
  author = new Int32Array(1024);
  start = new Float64Array(1024);
  end = new Float64Array(1024);
  created = new Float64Array(1024);
  post = new Float64Array(1024);
  private freeList: number[] = [];
  private used = 0;

  add(author: number, start: number, end: number, created: number, post: number): number {
    let i: number;
    if (this.freeList.length > 0) i = this.freeList.pop()!;
    else {
      if (this.used === this.author.length) this.grow();
      i = this.used++;
    }
    this.author[i] = author;
    this.start[i] = start;
    this.end[i] = end;
    this.created[i] = created;
    this.post[i] = post;
    return i;
  }

  release(i: number): void {
    this.freeList.push(i);
  }

  private grow(): void {
    const n = this.author.length * 2;
    const a = new Int32Array(n);
    a.set(this.author);
    this.author = a;
    for (const k of ['start', 'end', 'created', 'post'] as const) {
      const f = new Float64Array(n);
      f.set(this[k]);
      this[k] = f;
    }
  }
}
