// The estimate's column of `feedlab compare SCENARIO`: the design documents' closed forms
// (feedlab estimate) with the inputs of the replay's world (its users, its per-user rates on the
// replay's wall clock, the lists its readers merge under the policy), for the figures the estimate
// has: writes per second (mean and peak, dormant followers skipped), timeline memory, Redis
// operations per read and the idle read. It is the documents' method applied to the same world, so
// it shows where the method is off, not a fit.
import { pullsAuthor, type FanoutPolicy } from '../../core/fanout-policy.js';
import type { FigureId } from '../../sim/compare/figures.js';
import { runEstimate } from '../../sim/estimate/estimate.js';
import { scenarioInputs } from '../../sim/estimate/from-scenario.js';
import type { MirrorWorld } from '../../sim/replay/mirror.js';
import type { Scenario } from '../../sim/scenario/types.js';

/** Estimate figure -> compare figure, and the factor from the estimate's unit to compare's. */
const FROM_ESTIMATE: ReadonlyArray<[string, FigureId, number]> = [
  ['fanout_writes_per_second_active_avg', 'writes_per_second_mean', 1],
  ['fanout_writes_per_second_active_peak', 'writes_per_second_peak', 1],
  ['timeline_memory_bytes_redis', 'memory_timelines_bytes', 1],
  ['redis_ops_per_read', 'commands_per_read', 1],
  ['read_latency_seconds', 'read_p50', 1000],
];

/** Mean lists a reader merges beyond the timeline: the followees the policy pulls, over the active readers. */
function pulledPerReader(world: MirrorWorld, policy: FanoutPolicy): number {
  const g = world.graph;
  const active = world.population.activeUsers;
  let pulled = 0;
  for (let i = 0; i < active.length; i++) {
    const u = active[i];
    for (let e = g.followeeOffsets[u]; e < g.followeeOffsets[u + 1]; e++) {
      if (pullsAuthor(policy, world.followerCounts[g.followeeIds[e]], policy.threshold)) pulled++;
    }
  }
  return active.length > 0 ? pulled / active.length : 0;
}

/** The estimate's figures for the replay's world under `policy` (scenario: the mapped one). */
export function estimateSide(scenario: Scenario, world: MirrorWorld, policy: FanoutPolicy): Partial<Record<FigureId, number>> {
  const k = world.mapping.timeScale;
  const a = scenario.activity;
  const wall: Scenario = {
    ...scenario,
    population: world.graph.users,
    activity: { ...a, postsPerUserPerDay: { ...a.postsPerUserPerDay, mean: a.postsPerUserPerDay.mean * k }, sessionsPerUserPerDay: a.sessionsPerUserPerDay * k },
    policy: { ...scenario.policy, kind: policy.kind, threshold: policy.threshold, skipDormant: policy.skipDormant },
  };
  const inputs = { ...scenarioInputs(wall), 'celebrities.followed': pulledPerReader(world, policy) };
  const result = runEstimate({ scenarioInputs: inputs, source: scenario.source });
  const out: Partial<Record<FigureId, number>> = {};
  for (const [from, to, factor] of FROM_ESTIMATE) {
    const f = result.figures.find((x) => x.id === from);
    if (f && Number.isFinite(f.value)) out[to] = f.value * factor;
  }
  return out;
}
