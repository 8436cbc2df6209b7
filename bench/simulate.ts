// One simulated day of a 1M-user network with 20M follows, 2M posts and 10M feed reads.
// Target (the simulator issue): under 60 s of wall time.
import { generateGraph } from '../sim/graph/generate.js';
import { buildPopulation } from '../sim/model/population.js';
import { simulate } from '../sim/model/simulation.js';
import { basePolicy } from '../sim/policy.js';
import { parseScenario } from '../sim/scenario/load.js';

const TARGET_SECONDS = 60;

const SCENARIO = `
name: bench-day
seed: 1
duration: 1d
graph:
  generate: { users: 1000000, avgFollows: 20, alpha: 2.1, maxFollows: 5000 }
activity:
  postsPerUserPerDay: 2
  sessionsPerUserPerDay: 10
  pagesPerSession: 1
  dormantShare: 0
  diurnal: { peakFactor: 3, peakHourUtc: 20 }
infrastructure:
  fanoutWorkers: 20
  writesPerSecondPerWorker: 5000
policy: { kind: threshold, threshold: 25000 }
`;

export async function benchSimulate(): Promise<void> {
  const sc = parseScenario(SCENARIO, 'bench-day');
  const gen = sc.graph.kind === 'generate' ? sc.graph : null;
  if (!gen) throw new Error('bench scenario must generate its graph');
  let t0 = performance.now();
  const graph = generateGraph({ users: gen.users, avgFollows: gen.avgFollows, alpha: gen.alpha, maxFollows: gen.maxFollows, followsSigma: gen.followsSigma, seed: sc.seed, celebrities: [] });
  const genSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const population = buildPopulation(graph, sc);
  const m = simulate({ scenario: sc, population, policy: basePolicy(sc) });
  const wall = (performance.now() - t0) / 1000;
  console.log(`simulate one day: ${graph.users} users, ${graph.edges} follows (generated in ${genSeconds.toFixed(1)} s)`);
  console.log(`  ${Math.round(m.posts.total)} posts, ${Math.round(m.reads.total)} feed reads, ${Math.round(m.fanout.deliveries)} deliveries, ${m.eventsProcessed} events`);
  console.log(
    `  wall ${wall.toFixed(1)} s: ${(TARGET_SECONDS / wall).toFixed(2)}x faster than the ${TARGET_SECONDS} s target; ` +
      `${(m.posts.total / wall / 1e3).toFixed(0)}k simulated posts/s, ${(m.fanout.deliveries / wall / 1e6).toFixed(2)}M deliveries/s, ` +
      `${(m.reads.total / wall / 1e3).toFixed(0)}k reads/s of wall time; peak RSS ${(process.memoryUsage().rss / 1e9).toFixed(2)} GB`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSimulate();
