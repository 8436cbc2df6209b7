// Posts whose events are on their way through the outbox relay and the event log, until the log has
// them (the reference worker's consumers take them then: fanout-stage.ts).
import { RecordPool } from './record-pool.js';

export class LoggedPosts extends RecordPool {
  author = new Int32Array(256);
  created = new Float64Array(256);
  post = new Float64Array(256);
  /** Real posts the record stands for. */
  stands = new Float64Array(256);
  /** When the API had the post in its author's list (a pulled post is visible from then). */
  visible = new Float64Array(256);

  constructor() {
    super(['author', 'created', 'post', 'stands', 'visible']);
  }

  add(author: number, created: number, post: number, stands: number, visible: number): number {
    const i = this.slot();
    this.author[i] = author;
    this.created[i] = created;
    this.post[i] = post;
    this.stands[i] = stands;
    this.visible[i] = visible;
    return i;
  }
}
