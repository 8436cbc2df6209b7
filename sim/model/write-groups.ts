// Pending timeline writes, one record per group of a post's batches that land together: followers
// in CSR range [start, end) of the author.
import { RecordPool } from './record-pool.js';

export class WriteGroups extends RecordPool {
  author = new Int32Array(1024);
  start = new Float64Array(1024);
  end = new Float64Array(1024);
  created = new Float64Array(1024);
  post = new Float64Array(1024);

  constructor() {
    super(['author', 'start', 'end', 'created', 'post']);
  }

  add(author: number, start: number, end: number, created: number, post: number): number {
    const i = this.slot();
    this.author[i] = author;
    this.start[i] = start;
    this.end[i] = end;
    this.created[i] = created;
    this.post[i] = post;
    return i;
  }
}
