// A replay's world as the simulator runs it, for `feedlab compare`: the same live graph and
// population (who is dormant, who posts how often), the same follower counts the policies decide
// on (celebrities at population scale), the same seeded schedule seen on the replay's wall clock
// (sim/workload/time-scaled.ts), and the reference deployment's shape on one machine: the fan-out
// worker processes the replay started, each writing whole posts, one API process on one core, the
// API's Postgres pool for rebuilds, the event log's partitions, one Redis process for every shard,
// every service sharing the machine's cores. Costs come from the scenario (its calibration, when it includes one).
import type { FanoutPolicy } from '../../core/fanout-policy.js';
import { DEFAULT_API_PG_POOL } from '../../core/deployment.js';
import { DEFAULT_PARTITIONS } from '../../core/fanout-worker.js';
import { followerDistribution } from '../graph/follower-distribution.js';
import type { FollowerGraph } from '../graph/graph.js';
import type { Population } from '../model/population.js';
import { simulate } from '../model/simulation.js';
import { buildResult, type RunResult } from '../result.js';
import { parseScenario } from '../scenario/load.js';
import type { ApiTier, Scenario } from '../scenario/types.js';
import { ArrivalSchedule } from '../workload/schedule.js';
import { timeScaled } from '../workload/time-scaled.js';
import type { ReplayMapping } from './mapping.js';

export interface MirrorWorld {
  /** The mapping once the graph is known (withFileUsers). */
  mapping: ReplayMapping;
  graph: FollowerGraph;
  population: Population;
  /** users.follower_count as the replay loads it: what the policies compare with their thresholds. */
  followerCounts: Float64Array;
}

/** The API tier's defaults, for a scenario that leaves it out (api: none) but is compared with a live run that has one. */
function defaultApi(): ApiTier {
  return parseScenario('name: api-defaults\n', 'api-defaults').infrastructure.api!;
}

/** The mapped scenario in the replay's wall time, on this machine's deployment. */
export function mirrorScenario(m: ReplayMapping, cores: number): Scenario {
  const sc = m.scenario;
  const infra = sc.infrastructure;
  return {
    ...sc,
    duration: m.wallSeconds,
    events: sc.events.map((e) => ({ ...e, at: e.at / m.timeScale, ...('window' in e ? { window: e.window / m.timeScale } : {}) })),
    infrastructure: {
      ...infra,
      fanoutWorkers: m.workers.started,
      largePostClass: null,
      partitions: DEFAULT_PARTITIONS,
      postgresConnections: DEFAULT_API_PG_POOL,
      worker: { ...infra.worker, splitPosts: false },
      api: { ...(infra.api ?? defaultApi()), instances: 1, coresPerInstance: 1 },
      cores: infra.cores ?? cores,
      // the replay's shards are key groups on this machine's one Redis
      redisProcesses: 1,
    },
  };
}

/**
 * One simulation of the replay's world under `policy`, sending exactly the schedule the replay sent.
 * `seed` seeds the model's own draws (the hop, the service-time spread, the waits at Redis): the
 * scenario's seed, then others, give the spread of the model over one workload. `keyPrefix`: the
 * replay's key space (replayKeyPrefix), so the memory by key class counts the same key names.
 */
export function simulateMirror(world: MirrorWorld, policy: FanoutPolicy, seed: number, cores: number, keyPrefix = ''): RunResult {
  const m = world.mapping;
  const base = mirrorScenario(m, cores);
  const sc = { ...base, seed };
  const population: Population = { ...world.population, realFollowers: world.followerCounts };
  const schedule = timeScaled(new ArrivalSchedule(m.scenario, population), m.timeScale);
  const metrics = simulate({ scenario: sc, population, policy, schedule, keyPrefix });
  const g = world.graph;
  return buildResult(sc, { users: g.users, edges: g.edges, provenance: { ...g.provenance }, followers: followerDistribution(g) }, metrics);
}

/**
 * The prefix of the key names a replay's Redis memory was measured under: its scratch key space
 * (about 28 characters, which take a one-entry timeline from 104 to 136 B of MEMORY USAGE), or a
 * target's own.
 */
export function replayKeyPrefix(r: RunResult): string {
  return r.replay?.memory.keyPrefix ?? r.replay?.scratch?.keyPrefix ?? '';
}
