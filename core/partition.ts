// Which event-log partition an author's post events go to: one partition per author, so one
// author's events stay in order, and the worker that owns the partition handles them one after
// another. The server's Redis Streams log and the simulator's partitions both call this. (The
// Kafka log leaves the choice to the broker's keyed partitioner, murmur2 of the author id, since a
// topic's partitions are the broker's.)

/** The partition of an author's events: authors are numbered densely, so this spreads them evenly. */
export function authorPartition(authorId: number, partitions: number): number {
  return authorId % partitions;
}
