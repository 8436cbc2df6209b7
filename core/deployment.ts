// Sizes of the reference deployment that its model must share: the simulator of a replay's world
// (sim/replay/mirror.ts) gives the model what `feedlab serve` runs with.

/** Postgres connections of one API process (timeline rebuilds and followee loads queue on them). */
export const DEFAULT_API_PG_POOL = 20;
/** A fan-out worker's Postgres pool: its statements are few and short. */
export const DEFAULT_WORKER_PG_POOL = 10;
