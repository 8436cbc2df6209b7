// A scenario file gives the estimate its inputs in the same schema as `feedlab run`.
import type { Scenario } from '../scenario/types.js';
import { meanPagesPerSession } from '../workload/activity.js';
import type { Inputs } from './inputs.js';

export function scenarioInputs(sc: Scenario): Partial<Inputs> {
  const users = sc.population ?? (sc.graph.kind === 'generate' ? sc.graph.users : undefined);
  const a = sc.activity;
  const infra = sc.infrastructure;
  const out: Partial<Inputs> = {
    'posters.share': 1,
    'posts.perPoster': a.postsPerUserPerDay.mean,
    'reads.perUser': a.sessionsPerUserPerDay * meanPagesPerSession(a.pagesPerSession),
    peakFactor: a.diurnal ? a.diurnal.peakFactor : 1,
    'dormant.share': sc.policy.skipDormant ? a.dormantShare : 0,
    'timeline.cap': sc.policy.timelineCap,
    'fleet.writesPerSecond': infra.fanoutWorkers * infra.writesPerSecondPerWorker,
    'lag.allowed': sc.slo.fanoutLagP99,
    // push never pulls, pull always does
    threshold: sc.policy.kind === 'push' ? Infinity : sc.policy.kind === 'pull' ? 0 : sc.policy.threshold,
    'page.size': a.pageSize,
    'cost.rtt': infra.costs.rtt,
    'cost.pushWrite': infra.costs.zadd,
    'cost.pullRead': infra.costs.zrange,
    'cost.hydratePerPost': infra.costs.mgetPerKey,
  };
  if (users !== undefined) {
    // the daily actives are the users not dormant; their timelines are the ones kept warm
    out.dau = users * (1 - a.dormantShare);
    out['timeline.users'] = sc.policy.skipDormant ? users * (1 - a.dormantShare) : users;
  }
  if (sc.graph.kind === 'generate') {
    out['followers.avg'] = sc.graph.avgFollows;
    const celebrities = sc.graph.celebrities;
    if (celebrities.length > 0 && users !== undefined) {
      out['celebrity.followers'] = Math.max(...celebrities.map((c) => (c.followers <= 1 ? c.followers * users : c.followers)));
    }
  }
  if (sc.policy.kind === 'push') out['celebrities.followed'] = 0;
  // a celebrity above the large-post bound fans out on its own workers
  const large = infra.largePostClass;
  if (large && (out['celebrity.followers'] ?? 0) > large.followers) out['fleet.writesPerSecond'] = large.workers * infra.writesPerSecondPerWorker;
  const burst = sc.events.find((e) => e.kind === 'celebrityBurst');
  if (burst && burst.kind === 'celebrityBurst') out['burst.celebrities'] = burst.accounts * burst.postsPerAccount;
  return out;
}
