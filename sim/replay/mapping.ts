// How a scenario maps onto one machine's live stack for `feedlab replay`.
//
// A scenario written for 200M users does not fit one machine, so replay runs a smaller world with
// the scenario's shape:
//  - users: the graph loaded into Postgres is generated from the scenario's own parameters (the
//    same follows per user, follower tail, seed) at `replay.users` accounts (--users), default
//    graph.generate.users. Celebrities keep their share of the users: a celebrity given as an
//    absolute count (50M of a 200M population) becomes that share (25%) of the live users.
//  - every live user is one real user: no population scaling of the load. The per-user rates
//    (posts and sessions per day, pages, the dormant share, the diurnal curve) are the scenario's,
//    so the server sees the scenario's per-user load pattern.
//  - policies compare follower counts at population scale, as the simulator does: users.follower_count
//    of a named celebrity is its live followers x population / users (an ordinary account's is its
//    own count), so `threshold:25000` pulls the same accounts live as in the simulation, while the
//    fan-out work is the live follows. `celebrityScale` is that factor.
//  - time: `replay.timeScale` (--time-scale) simulated seconds pass per wall second; the schedule is
//    made in simulated time and sent at t / timeScale, so every rate is timeScale times the
//    scenario's per wall second (2 h at 30x: 4 wall minutes). The lease and dormancy windows are
//    not compressed: they are days of real time, and the starting state (posts of the last lease
//    window, who is dormant) is laid down at the per-user rates.
//  - fan-out workers: `replay.workers` processes (default infrastructure.fanoutWorkers), capped at
//    one per core of this machine.
import type { Scenario } from '../scenario/types.js';
import { ScenarioError } from '../scenario-error.js';

/** What the command line may set over the scenario's replay section. */
export interface ReplayOverrides {
  users?: number;
  timeScale?: number;
  workers?: number;
}

export interface ReplayMapping {
  /** The scenario as replayed: its graph at the live size, no population scaling of the load. */
  scenario: Scenario;
  users: number;
  /** Simulated seconds per wall second. */
  timeScale: number;
  /** Simulated seconds of the scenario, and the wall seconds they take. */
  simulatedSeconds: number;
  wallSeconds: number;
  /** The scenario's population (or its graph's users): what the policies' follower counts stand for. */
  population: number;
  /** users.follower_count of a named account = live followers x this (1 when nothing is scaled). */
  celebrityScale: number;
  workers: { asked: number; started: number; cap: number };
  warm: boolean;
  /** Lines that say what the mapping changed (printed before the run, kept in the result). */
  notes: string[];
}

/** The replay mapping of a scenario; `cores` is this machine's (the worker cap). ScenarioError on what cannot map. */
export function replayMapping(sc: Scenario, overrides: ReplayOverrides, cores: number): ReplayMapping {
  const settings = sc.replay ?? { users: null, timeScale: 1, workers: null, warm: true, policies: null };
  const timeScale = overrides.timeScale ?? settings.timeScale;
  if (!(timeScale > 0) || !Number.isFinite(timeScale)) throw new ScenarioError(`--time-scale must be a positive number, got ${timeScale}`);
  const notes: string[] = [];

  let users: number;
  let scenario: Scenario;
  let population: number;
  if (sc.graph.kind === 'file') {
    const asked = overrides.users ?? settings.users;
    if (asked !== null && asked !== undefined) {
      throw new ScenarioError(`${sc.source}: replay of a graph file loads the whole file; --users (or replay.users) applies to generated graphs only`);
    }
    users = NaN; // known once the file is read: see withFileUsers
    population = sc.population ?? NaN;
    scenario = { ...sc, population: null };
  } else {
    const gen = sc.graph;
    users = overrides.users ?? settings.users ?? gen.users;
    if (!Number.isInteger(users) || users < 2) throw new ScenarioError(`--users must be a whole number of at least 2, got ${users}`);
    population = sc.population ?? gen.users;
    const celebrities = gen.celebrities.map((c) => {
      if (c.followers <= 1) return { ...c };
      const share = c.followers / population;
      if (share > 1) throw new ScenarioError(`${sc.source}: a celebrity with ${c.followers} followers is more than the population of ${population}`);
      notes.push(`celebrities ${c.name ?? ''}${c.name ? ': ' : ''}${c.followers} followers of ${population} become a share ${Number(share.toPrecision(4))} of the ${users} live users`);
      return { ...c, followers: share };
    });
    scenario = { ...sc, population: null, graph: { ...gen, users, celebrities } };
    if (users !== gen.users) notes.push(`graph: ${users} users generated from the scenario's parameters (it samples ${gen.users})`);
  }

  const cap = Math.max(1, Math.floor(cores));
  const asked = overrides.workers ?? settings.workers ?? sc.infrastructure.fanoutWorkers;
  const started = Math.min(asked, cap);
  if (started < asked) notes.push(`fan-out workers: ${started} processes started, the scenario asks for ${asked} (this machine runs at most ${cap}, one per core)`);
  if (timeScale !== 1) notes.push(`time: ${timeScale} simulated seconds per wall second; rates are ${timeScale}x the scenario's per wall second`);

  const mapping: ReplayMapping = {
    scenario,
    users,
    timeScale,
    simulatedSeconds: sc.duration,
    wallSeconds: sc.duration / timeScale,
    population,
    celebrityScale: Number.isFinite(users) && Number.isFinite(population) ? population / users : 1,
    workers: { asked, started, cap },
    warm: settings.warm,
    notes,
  };
  if (mapping.celebrityScale !== 1) {
    notes.push(`policies compare follower counts at population scale: a named celebrity's count is its live followers x ${Number(mapping.celebrityScale.toPrecision(6))}`);
  }
  return mapping;
}

/** Seconds of a series column in a replay: the wall time one simulated minute takes (at least a second). */
export function seriesIntervalSeconds(timeScale: number): number {
  return Math.max(1, 60 / timeScale);
}

/** A graph-file mapping once the file's accounts are known. */
export function withFileUsers(m: ReplayMapping, fileUsers: number): ReplayMapping {
  if (Number.isFinite(m.users)) return m;
  const population = Number.isFinite(m.population) ? m.population : fileUsers;
  return { ...m, users: fileUsers, population, celebrityScale: population / fileUsers };
}

/** Follower counts the policies decide on: live followers, times celebrityScale for named accounts. */
export function policyFollowerCounts(followerOffsets: Uint32Array, names: ReadonlyMap<number, string>, celebrityScale: number): Float64Array {
  const n = followerOffsets.length - 1;
  const out = new Float64Array(n);
  for (let a = 0; a < n; a++) out[a] = followerOffsets[a + 1] - followerOffsets[a];
  if (celebrityScale !== 1) for (const a of names.keys()) out[a] = Math.round(out[a] * celebrityScale);
  return out;
}
