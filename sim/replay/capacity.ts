// What a replay offers the live stack, and whether this machine can carry it: the offered posts and
// feed pages per wall second (mean and peak), the starting state's Redis and Postgres footprint,
// and, once the server's maximum read rate is measured, the largest time scale or user count that
// fits. A mapping the machine cannot carry is refused before the measured window, in one line.
import { authorListInstanceBytes, timelineInstanceBytes } from '../../core/redis-memory.js';
import { isDormant, SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { pullsAuthor, type FanoutPolicy } from '../../core/fanout-policy.js';
import type { FollowerGraph } from '../graph/graph.js';
import type { Population } from '../model/population.js';
import type { Scenario } from '../scenario/types.js';
import { formatBytes, formatCount } from '../scenario/units.js';
import type { History } from '../workload/history.js';
import type { MaterializedSchedule } from '../workload/schedule.js';

/** Peaks are taken over windows this long: the server's queues absorb shorter Poisson clumps. */
export const PEAK_WINDOW_SECONDS = 5;
/** A replay may offer at most this share of the measured closed-loop maximum read rate. */
export const MAX_READ_SHARE = 0.9;

export interface OfferedLoad {
  wallSeconds: number;
  posts: number;
  /** Feed pages: every page of every session (later pages are sent as earlier ones answer). */
  pages: number;
  sessions: number;
  postsPerSecond: { mean: number; peak: number };
  readsPerSecond: { mean: number; peak: number };
}

/** Offered load per wall second of a schedule sent at `timeScale` simulated seconds per wall second. */
export function offeredLoad(s: MaterializedSchedule, timeScale: number): OfferedLoad {
  const wallSeconds = s.durationSeconds / timeScale;
  const bins = Math.max(1, Math.ceil(wallSeconds));
  const posts = new Float64Array(bins);
  const pages = new Float64Array(bins);
  for (let i = 0; i < s.posts.at.length; i++) posts[Math.min(bins - 1, Math.floor(s.posts.at[i] / timeScale))]++;
  let pageCount = 0;
  for (let i = 0; i < s.sessions.at.length; i++) {
    pages[Math.min(bins - 1, Math.floor(s.sessions.at[i] / timeScale))] += s.sessions.pages[i];
    pageCount += s.sessions.pages[i];
  }
  return {
    wallSeconds,
    posts: s.posts.at.length,
    pages: pageCount,
    sessions: s.sessions.at.length,
    postsPerSecond: { mean: s.posts.at.length / wallSeconds, peak: windowPeak(posts) },
    readsPerSecond: { mean: pageCount / wallSeconds, peak: windowPeak(pages) },
  };
}

function windowPeak(perSecond: Float64Array): number {
  const w = Math.min(PEAK_WINDOW_SECONDS, perSecond.length);
  let sum = 0;
  for (let i = 0; i < w; i++) sum += perSecond[i];
  let peak = sum;
  for (let i = w; i < perSecond.length; i++) {
    sum += perSecond[i] - perSecond[i - w];
    if (sum > peak) peak = sum;
  }
  return peak / w;
}

export interface Footprint {
  /** Timelines kept warm at the start and their entries. */
  timelines: number;
  timelineEntries: number;
  /** Redis bytes of the warm timelines and the pulled authors' lists (the memory model). */
  redisBytes: number;
  /** Postgres bytes of users, follows and the history posts (heap and indexes, estimated). */
  postgresBytes: number;
}

// Bytes per row in Postgres with its indexes, measured on this project's schema (Postgres 15):
// a follow is ~56 B of heap and two ~32 B index entries; a post ~240 B of heap with a 200-character
// body plus two index entries; a user ~100 B.
const FOLLOW_ROW_BYTES = 120;
const POST_ROW_BYTES = 330;
const USER_ROW_BYTES = 150;

/**
 * 1 for the users whose timelines the simulator keeps warm at the start (sim/model/simulation.ts):
 * the active, and the dormant ones the fan-out still writes to (every one without dormant skipping;
 * with it, those away for less than the lease).
 */
export function keptAtStart(sc: Scenario, pop: Population, policy: FanoutPolicy): Uint8Array {
  const lease = sc.policy.leaseDays * SECONDS_PER_DAY;
  const kept = new Uint8Array(pop.users);
  for (let u = 0; u < pop.users; u++) {
    const dormant = isDormant(pop.lastSeen[u], 0, sc.policy.dormantDays);
    kept[u] = !dormant || !policy.skipDormant || -pop.lastSeen[u] < lease ? 1 : 0;
  }
  return kept;
}

/**
 * The starting state's size: each kept timeline holds its pushed followees' history posts of the
 * lease window (capped), each pulled author a list of its own. Exact counts over the history, O(history
 * posts x followers).
 */
export function startingFootprint(sc: Scenario, graph: FollowerGraph, pop: Population, history: History, policy: FanoutPolicy, followerCounts: Float64Array): Footprint {
  const cap = sc.policy.timelineCap;
  const length = new Uint32Array(graph.users);
  const listLength = new Uint32Array(graph.users);
  const kept = keptAtStart(sc, pop, policy);
  for (let i = 0; i < history.author.length; i++) {
    const a = history.author[i];
    if (pullsAuthor(policy, followerCounts[a], policy.threshold)) {
      listLength[a]++;
      continue;
    }
    for (let e = graph.followerOffsets[a]; e < graph.followerOffsets[a + 1]; e++) {
      const u = graph.followerIds[e];
      if (kept[u]) length[u]++;
    }
  }
  let timelines = 0;
  let entries = 0;
  let bytes = 0;
  for (let u = 0; u < graph.users; u++) {
    if (kept[u]) {
      const n = Math.min(cap, length[u]);
      timelines++;
      entries += n;
      bytes += timelineInstanceBytes(Math.max(1, n));
    }
    if (listLength[u] > 0) bytes += authorListInstanceBytes(Math.min(sc.policy.celebrityListLength, listLength[u]));
  }
  return {
    timelines,
    timelineEntries: entries,
    redisBytes: bytes,
    postgresBytes: graph.edges * FOLLOW_ROW_BYTES + history.author.length * POST_ROW_BYTES + graph.users * USER_ROW_BYTES,
  };
}

/** What this machine can give the replay (null: unknown, not checked). */
export interface MachineRoom {
  redisBytes: number | null;
  postgresBytes: number | null;
  /** Where the figures come from, for the refusal line. */
  redisFrom: string;
  postgresFrom: string;
}

/** null when the starting state fits, else one line saying what does not and the largest --users that does. */
export function footprintRefusal(fp: Footprint, room: MachineRoom, users: number): string | null {
  const problems: string[] = [];
  let largest = users;
  if (room.redisBytes !== null && fp.redisBytes > room.redisBytes) {
    problems.push(`its warm timelines and lists need about ${formatBytes(fp.redisBytes)} of Redis memory, more than the ${formatBytes(room.redisBytes)} ${room.redisFrom}`);
    largest = Math.min(largest, Math.floor((users * room.redisBytes) / fp.redisBytes));
  }
  if (room.postgresBytes !== null && fp.postgresBytes > room.postgresBytes) {
    problems.push(`its users, follows and posts need about ${formatBytes(fp.postgresBytes)} in Postgres, more than the ${formatBytes(room.postgresBytes)} ${room.postgresFrom}`);
    largest = Math.min(largest, Math.floor((users * room.postgresBytes) / fp.postgresBytes));
  }
  if (problems.length === 0) return null;
  return `the live graph of ${formatCount(users)} users does not fit this machine: ${problems.join('; ')}; the largest that fits is about --users ${Math.max(2, Math.floor(largest * 0.95))}`;
}

/**
 * null when the peak offered read rate is within MAX_READ_SHARE of the measured maximum, else one line
 * with the largest time scale (and, at this time scale, user count) that fits.
 */
export function readRateRefusal(offered: OfferedLoad, maxReadsPerSecond: number, timeScale: number, users: number): string | null {
  const allowed = maxReadsPerSecond * MAX_READ_SHARE;
  const peak = offered.readsPerSecond.peak;
  if (peak <= allowed) return null;
  const factor = allowed / peak;
  const scale = timeScale * factor;
  const fewer = Math.floor(users * factor);
  return (
    `the schedule offers up to ${formatCount(peak)} feed pages/s (peak over ${PEAK_WINDOW_SECONDS} s at time scale ${timeScale}), more than ${MAX_READ_SHARE * 100}% of the ` +
    `${formatCount(maxReadsPerSecond)} reads/s this machine's server sustains (closed loop, measured just now); the largest that fits is ` +
    `--time-scale ${Number(scale.toPrecision(3))}` +
    (fewer >= 2 ? ` (or --users ${fewer} at time scale ${timeScale})` : '')
  );
}
