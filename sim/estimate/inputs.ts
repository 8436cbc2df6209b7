// The inputs of the back-of-envelope estimate: every number a design document assumes, by name.
// `feedlab estimate --set name=value` changes one; presets give a document's own values.

export type InputUnit = 'users' | 'share' | 'per-day' | 'count' | 'factor' | 'bytes' | 'seconds' | 'writes/s' | 'requests/s';

export interface InputSpec {
  name: string;
  unit: InputUnit;
  default: number;
  description: string;
  /** Smallest value that makes sense (a timeline needs at least one entry). */
  min?: number;
}

export const INPUTS: readonly InputSpec[] = [
  { name: 'dau', unit: 'users', default: 100e6, description: 'daily active users' },
  { name: 'posters.share', unit: 'share', default: 1, description: 'share of daily users who post' },
  { name: 'posts.perPoster', unit: 'per-day', default: 1, description: 'posts per posting user per day' },
  { name: 'reads.perUser', unit: 'per-day', default: 10, description: 'home-feed reads (page requests) per user per day' },
  { name: 'peakFactor', unit: 'factor', default: 3, description: 'peak rate over the daily mean' },
  { name: 'followers.avg', unit: 'count', default: 200, description: 'followers a post reaches on average (= average follows)' },
  { name: 'dormant.share', unit: 'share', default: 0, description: 'share of followers skipped by the fan-out as dormant' },
  { name: 'readers.activeShare', unit: 'share', default: 1, description: 'share of followers who read their feed at all (matters when dormant followers are pushed too)' },
  { name: 'post.bytes', unit: 'bytes', default: 500, description: 'a post row: text and metadata' },
  { name: 'media.share', unit: 'share', default: 0.1, description: 'share of posts carrying an image' },
  { name: 'media.bytes', unit: 'bytes', default: 200e3, description: 'stored size of one image' },
  { name: 'timeline.users', unit: 'users', default: 100e6, description: 'users whose timeline is kept in Redis' },
  { name: 'timeline.cap', unit: 'count', default: 800, description: 'post ids kept per timeline', min: 1 },
  { name: 'timeline.entryBytes', unit: 'bytes', default: 24, description: "the document's bytes per timeline entry" },
  { name: 'fleet.writesPerSecond', unit: 'writes/s', default: 250e3, description: 'timeline writes per second the fan-out fleet gives one large post', min: 1 },
  { name: 'lag.allowed', unit: 'seconds', default: 5, description: 'longest a post may take to reach every follower', min: 1e-3 },
  { name: 'threshold', unit: 'count', default: 25e3, description: 'followers above which an author is pulled at read time' },
  { name: 'celebrity.followers', unit: 'count', default: 50e6, description: "a celebrity's followers" },
  { name: 'burst.celebrities', unit: 'count', default: 10, description: 'celebrities posting at once (the World Cup exercise)' },
  { name: 'celebrities.followed', unit: 'count', default: 10, description: 'pulled authors a reader follows: lists merged per read' },
  { name: 'page.size', unit: 'count', default: 20, description: 'posts per feed page' },
  { name: 'cost.rtt', unit: 'seconds', default: 0.3e-3, description: 'network round trip to Redis' },
  { name: 'cost.pushWrite', unit: 'seconds', default: 2e-6, description: 'Redis time of one pushed timeline write (ZADD)' },
  { name: 'cost.pullRead', unit: 'seconds', default: 15e-6, description: "Redis time of reading one author's recent-post list" },
  { name: 'cost.hydratePerPost', unit: 'seconds', default: 2e-6, description: 'Redis time per post body in the page MGET' },
  { name: 'redis.nodeMemory', unit: 'bytes', default: 64e9, description: 'usable memory of one Redis node', min: 1 },
  { name: 'redis.replicas', unit: 'count', default: 1, description: 'replicas per Redis shard' },
  { name: 'api.requestsPerInstance', unit: 'requests/s', default: 500, description: 'feed requests one API instance serves', min: 1 },
];

export const INPUT_NAMES = INPUTS.map((i) => i.name);

export type Inputs = Record<string, number>;

export function defaultInputs(): Inputs {
  return Object.fromEntries(INPUTS.map((i) => [i.name, i.default]));
}

export function inputSpec(name: string): InputSpec | undefined {
  return INPUTS.find((i) => i.name === name);
}
