// The seeded arrival schedule of a scenario: every post (its time and author), every read session
// (its time, reader and pages) and every event instant, made once from the scenario, its seed and
// its population. The simulator consumes it as two lazy streams (a day of a million users is
// millions of sessions: never held in memory there); `feedlab replay` materializes the same streams
// into typed arrays and sends them to the live server, so that a simulation and a replay of one
// scenario and seed see the same workload, byte for byte (`digest`).
//
// Each stream draws from its own seeded generator, in the order the simulator always drew:
//   posts    ('posts')  the first organic arrival, then per arrival its author (alias table over
//                       the active users' post rates) and the next arrival (Poisson, thinned by the
//                       diurnal curve and breaking-news windows); celebrity-burst posts merged in by time
//   sessions ('reads')  the first arrival, then per session its reader (uniform over the active
//                       users), its page count, and the next arrival; cold-start-storm returns merged
//                       in by time, each drawing its page count when it comes up
//   events   ('events') burst post times and storm return times, drawn up front in scenario order
import { createHash } from 'node:crypto';
import { SECONDS_PER_DAY } from '../../core/timeline-rules.js';
import { buildAliasTable, drawAlias, type AliasTable } from '../graph/alias.js';
import type { FiredEvent } from '../model/metrics.js';
import type { Population } from '../model/population.js';
import { Rng } from '../../core/random.js';
import type { Scenario } from '../scenario/types.js';
import { PagesSampler } from './activity.js';
import { RateProfile, type RateWindow } from './rate-profile.js';

export const SCHEDULE_SCHEMA = 'feedlab.schedule/1';

interface Timed {
  at: number;
  id: number;
}

/** Posts in time order: organic arrivals and celebrity-burst posts. */
export class PostStream {
  /** The current post (valid after next() returned true). */
  at = 0;
  author = 0;
  /** false for a celebrity-burst post (one real post by that account, whatever the scale). */
  organic = true;
  private nextOrganic: number;
  private burst = 0;
  private readonly rng: Rng;

  constructor(
    seed: number,
    private readonly profile: RateProfile,
    private readonly rate: number,
    private readonly authors: Int32Array,
    private readonly table: AliasTable | null,
    private readonly bursts: readonly Timed[],
  ) {
    this.rng = Rng.derive(seed, 'posts');
    this.nextOrganic = table ? profile.nextArrival(0, rate, this.rng.exponential(1)) : Infinity;
  }

  /** Advance to the next post; false when none is left (organic arrivals end with the profile). */
  next(): boolean {
    const b = this.burst < this.bursts.length ? this.bursts[this.burst] : null;
    if (b !== null && b.at < this.nextOrganic) {
      this.burst++;
      this.at = b.at;
      this.author = b.id;
      this.organic = false;
      return true;
    }
    if (!Number.isFinite(this.nextOrganic)) return false;
    this.at = this.nextOrganic;
    this.author = this.authors[drawAlias(this.table!, this.rng)];
    this.organic = true;
    this.nextOrganic = this.profile.nextArrival(this.at, this.rate, this.rng.exponential(1));
    return true;
  }
}

/** Read sessions in time order: organic sessions of active users and cold-start-storm returns. */
export class SessionStream {
  at = 0;
  user = 0;
  pages = 0;
  /** true for a dormant user returning in a cold-start storm. */
  returning = false;
  private nextOrganic: number;
  private ret = 0;
  private readonly rng: Rng;

  constructor(
    seed: number,
    private readonly profile: RateProfile,
    private readonly rate: number,
    private readonly active: Int32Array,
    private readonly sampler: PagesSampler,
    private readonly returns: readonly Timed[],
  ) {
    this.rng = Rng.derive(seed, 'reads');
    this.nextOrganic = rate > 0 && active.length > 0 ? profile.nextArrival(0, rate, this.rng.exponential(1)) : Infinity;
  }

  next(): boolean {
    const r = this.ret < this.returns.length ? this.returns[this.ret] : null;
    if (r !== null && r.at < this.nextOrganic) {
      this.ret++;
      this.at = r.at;
      this.user = r.id;
      this.pages = this.sampler.draw(this.rng);
      this.returning = true;
      return true;
    }
    if (!Number.isFinite(this.nextOrganic)) return false;
    this.at = this.nextOrganic;
    this.user = this.active[this.rng.int(this.active.length)];
    this.pages = this.sampler.draw(this.rng);
    this.returning = false;
    this.nextOrganic = this.profile.nextArrival(this.at, this.rate, this.rng.exponential(1));
    return true;
  }
}

/** The whole schedule in arrays (simulated seconds), as `feedlab replay` sends it. */
export interface MaterializedSchedule {
  schema: typeof SCHEDULE_SCHEMA;
  durationSeconds: number;
  posts: { at: Float64Array; author: Int32Array; burst: Uint8Array };
  sessions: { at: Float64Array; user: Int32Array; pages: Uint16Array; returning: Uint8Array };
  cacheLosses: { at: number; shards: number }[];
  /** Fan-out workers killed at `at` for `down` simulated seconds (workers null: every one); the replay injects them. */
  workerCrashes: WorkerCrash[];
  /** The API killed at `at` for `down` simulated seconds; the replay injects it. */
  apiCrashes: { at: number; down: number }[];
  /** Redis keys deleted at `at`: the event log's (eventLogLoss), or the cache's and the log's (redisFlush). */
  keyLosses: { at: number; kind: 'eventLogLoss' | 'redisFlush' }[];
  /** Redis or Postgres out of the stack's reach from `at` for `window` simulated seconds; the replay injects them. */
  outages: ServiceOutage[];
  events: FiredEvent[];
}

export interface ServiceOutage {
  at: number;
  service: 'redis' | 'postgres';
  window: number;
  mode: 'reset' | 'hang';
}

export interface WorkerCrash {
  at: number;
  workers: number | null;
  down: number;
}

/**
 * A scenario's arrivals over its population. Event draws happen here, once; the two streams are
 * made fresh by posts() and sessions(), each replaying its generator from the seed.
 */
export class ArrivalSchedule {
  readonly duration: number;
  /** Multiplier of the post rate over time: the diurnal curve and breaking-news windows. */
  readonly postProfile: RateProfile;
  /** Multiplier of the read rate over time: the diurnal curve. */
  readonly readProfile: RateProfile;
  /** Organic posts per second at a multiplier of 1 (sum of the active authors' rates). */
  readonly postEventRate: number;
  /** Organic sessions per second at a multiplier of 1. */
  readonly sessionEventRate: number;
  readonly cacheLosses: { at: number; shards: number }[] = [];
  readonly workerCrashes: WorkerCrash[] = [];
  readonly apiCrashes: { at: number; down: number }[] = [];
  readonly keyLosses: { at: number; kind: 'eventLogLoss' | 'redisFlush' }[] = [];
  readonly outages: ServiceOutage[] = [];
  /** Every scenario event, as reports list it. */
  readonly fired: FiredEvent[] = [];
  private readonly bursts: Timed[] = [];
  private readonly returns: Timed[] = [];
  private readonly authorIds: Int32Array;
  private readonly table: AliasTable | null;

  constructor(
    private readonly sc: Scenario,
    private readonly pop: Population,
  ) {
    const duration = sc.duration;
    this.duration = duration;
    const windows: RateWindow[] = [];
    for (const ev of sc.events) if (ev.kind === 'breakingNews') windows.push({ start: ev.at, end: ev.at + ev.window, multiplier: ev.multiplier });
    this.postProfile = new RateProfile(duration, sc.activity.diurnal, windows);
    this.readProfile = new RateProfile(duration, sc.activity.diurnal, []);
    this.authorIds = Int32Array.from(pop.activeUsers.filter((u) => pop.postRate[u] > 0));
    const weights = Float64Array.from(this.authorIds, (u) => pop.postRate[u]);
    let rate = 0;
    for (let i = 0; i < weights.length; i++) rate += weights[i];
    this.postEventRate = rate;
    this.table = this.authorIds.length > 0 ? buildAliasTable(weights) : null;
    this.sessionEventRate = (pop.activeUsers.length * sc.activity.sessionsPerUserPerDay) / SECONDS_PER_DAY;

    const rng = Rng.derive(sc.seed, 'events');
    const shards = sc.infrastructure.redisShards;
    let returnCursor = 0;
    for (const ev of sc.events) {
      switch (ev.kind) {
        case 'celebrityBurst':
          for (let i = 0; i < ev.accounts; i++) {
            for (let j = 0; j < ev.postsPerAccount; j++) this.bursts.push({ at: ev.at + rng.float() * ev.window, id: pop.burstAccounts[i] });
          }
          this.fired.push({ at: ev.at, kind: ev.kind, detail: `${ev.accounts} accounts post within ${ev.window}s` });
          break;
        case 'breakingNews':
          this.fired.push({ at: ev.at, kind: ev.kind, detail: `post rate x${ev.multiplier} for ${ev.window}s` });
          break;
        case 'coldStartStorm': {
          const count = Math.min(pop.dormantUsers.length - returnCursor, Math.round(ev.share * pop.dormantUsers.length));
          for (let i = 0; i < count; i++) this.returns.push({ at: ev.at + rng.float() * ev.window, id: pop.dormantUsers[returnCursor++] });
          this.fired.push({ at: ev.at, kind: ev.kind, detail: `${Math.round(count * pop.scale)} dormant users return within ${ev.window}s` });
          break;
        }
        case 'cacheLoss':
          this.cacheLosses.push({ at: ev.at, shards: ev.shards });
          this.fired.push({ at: ev.at, kind: ev.kind, detail: `${ev.shards} of ${shards} Redis shards lose their keys` });
          break;
        // the model holds the workers for `down` (what they had taken ends as computed); a replay kills them
        case 'workerCrash':
          this.workerCrashes.push({ at: ev.at, workers: ev.workers ?? null, down: ev.down });
          this.fired.push({ at: ev.at, kind: ev.kind, detail: `${ev.workers ?? 'every'} fan-out worker${ev.workers === undefined || ev.workers === 1 ? '' : 's'} killed for ${ev.down}s (modelled as down for ${ev.down}s; their start-up and the redelivery of what they held, replay only)` });
          break;
        // a fault of the live stack: a replay injects it; the model runs on as if nothing happened
        case 'apiCrash':
          this.apiCrashes.push({ at: ev.at, down: ev.down });
          this.fired.push({ at: ev.at, kind: ev.kind, detail: `the API killed for ${ev.down}s (replay only: not modelled)` });
          break;
        case 'eventLogLoss':
          this.keyLosses.push({ at: ev.at, kind: ev.kind });
          this.fired.push({ at: ev.at, kind: ev.kind, detail: "the event log's keys lost, the timelines kept (replay only: not modelled)" });
          break;
        // the cache part is a loss of every shard in the model; the event log's part only the replay's
        case 'redisFlush':
          this.keyLosses.push({ at: ev.at, kind: ev.kind });
          this.cacheLosses.push({ at: ev.at, shards });
          this.fired.push({ at: ev.at, kind: ev.kind, detail: `Redis flushed: every shard's keys and the event log lost (the log's loss replay only)` });
          break;
        case 'redisOutage':
        case 'postgresOutage': {
          const service = ev.kind === 'redisOutage' ? 'redis' : 'postgres';
          this.outages.push({ at: ev.at, service, window: ev.window, mode: ev.mode });
          this.fired.push({ at: ev.at, kind: ev.kind, detail: `${service === 'redis' ? 'Redis' : 'Postgres'} out of reach for ${ev.window}s (${ev.mode === 'reset' ? 'connections reset' : 'connections hang'}; replay only: not modelled)` });
          break;
        }
      }
    }
    // stable: equal times keep their draw order
    const byTime = (a: Timed, b: Timed) => a.at - b.at;
    this.bursts.sort(byTime);
    this.returns.sort(byTime);
  }

  posts(): PostStream {
    return new PostStream(this.sc.seed, this.postProfile.fork(), this.postEventRate, this.authorIds, this.table, this.bursts);
  }

  sessions(): SessionStream {
    return new SessionStream(this.sc.seed, this.readProfile.fork(), this.sessionEventRate, this.pop.activeUsers, new PagesSampler(this.sc.activity.pagesPerSession), this.returns);
  }

  /** Every arrival within the scenario's duration, in arrays. */
  materialize(): MaterializedSchedule {
    const posts = { at: new Growable(Float64Array), author: new Growable(Int32Array), burst: new Growable(Uint8Array) };
    for (const s = this.posts(); s.next() && s.at <= this.duration; ) {
      posts.at.push(s.at);
      posts.author.push(s.author);
      posts.burst.push(s.organic ? 0 : 1);
    }
    const sessions = { at: new Growable(Float64Array), user: new Growable(Int32Array), pages: new Growable(Uint16Array), returning: new Growable(Uint8Array) };
    for (const s = this.sessions(); s.next() && s.at <= this.duration; ) {
      sessions.at.push(s.at);
      sessions.user.push(s.user);
      sessions.pages.push(Math.min(65535, s.pages));
      sessions.returning.push(s.returning ? 1 : 0);
    }
    return {
      schema: SCHEDULE_SCHEMA,
      durationSeconds: this.duration,
      posts: { at: posts.at.done(), author: posts.author.done(), burst: posts.burst.done() },
      sessions: { at: sessions.at.done(), user: sessions.user.done(), pages: sessions.pages.done(), returning: sessions.returning.done() },
      cacheLosses: this.cacheLosses.map((c) => ({ ...c })),
      workerCrashes: this.workerCrashes.map((c) => ({ ...c })),
      apiCrashes: this.apiCrashes.map((c) => ({ ...c })),
      keyLosses: this.keyLosses.map((c) => ({ ...c })),
      outages: this.outages.map((c) => ({ ...c })),
      events: this.fired.map((e) => ({ ...e })),
    };
  }
}

/** SHA-256 of a schedule's bytes: equal digests, equal schedules. */
export function scheduleDigest(s: MaterializedSchedule): string {
  const h = createHash('sha256');
  h.update(`${s.schema}\n${s.durationSeconds}\n`);
  for (const a of [s.posts.at, s.posts.author, s.posts.burst, s.sessions.at, s.sessions.user, s.sessions.pages, s.sessions.returning]) {
    h.update(`${a.length}\n`);
    h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  }
  h.update(JSON.stringify({ cacheLosses: s.cacheLosses, events: s.events }));
  return h.digest('hex');
}

type TypedArray = Float64Array | Int32Array | Uint16Array | Uint8Array;
type TypedArrayCtor<T extends TypedArray> = { new (n: number): T };

/** An append-only typed array that doubles as it fills. */
class Growable<T extends TypedArray> {
  private data: T;
  private n = 0;
  constructor(private readonly ctor: TypedArrayCtor<T>) {
    this.data = new ctor(1024);
  }
  push(v: number): void {
    if (this.n === this.data.length) {
      const bigger = new this.ctor(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.n++] = v;
  }
  done(): T {
    return this.data.slice(0, this.n) as T;
  }
}
