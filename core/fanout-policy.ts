// Fan-out policies: who gets a post written into their timeline (push) and whose posts are merged
// in at read time (pull). One decision procedure, used by the server's worker and read path and by
// the simulator, so that the model simulates what the server does.
import { keyedUniform, mix32 } from './random.js';
import type { PostId } from './post-id.js';
import { nearest } from './suggest.js';
import { DEFAULT_CELEBRITY_THRESHOLD, DEFAULT_READER_CAP } from './timeline-rules.js';

/** How often an adaptive policy looks at the fan-out backlog and moves its threshold, seconds. */
export const ADAPTIVE_RECHECK_SECONDS = 1;

export type FanoutPolicyKind = 'push' | 'pull' | 'threshold' | 'rate' | 'reader-cap' | 'adaptive';

export interface FanoutPolicy {
  kind: FanoutPolicyKind;
  /** threshold / adaptive: authors with more followers than this are pulled. */
  threshold: number;
  /** Skip followers not seen within the dormancy window. */
  skipDormant: boolean;
  /** reader-cap: readers following more than this keep a delivery with probability readerCap / follows. */
  readerCap: number;
  /** adaptive: while the fan-out backlog (queued timeline writes) is over this, the threshold halves. */
  backlogBound: number;
  /** adaptive: the floor the threshold never goes below. */
  minThreshold: number;
}

export const POLICY_FORMS = [
  'push',
  'pull',
  'threshold:T',
  'rate',
  'reader-cap:N',
  'adaptive:T',
  '(any of them):skip-dormant or :all-followers',
];

export class PolicySpecError extends Error {}

const POLICY_KINDS: readonly FanoutPolicyKind[] = ['push', 'pull', 'threshold', 'rate', 'reader-cap', 'adaptive'];
const DORMANT_SUFFIXES = ['skip-dormant', 'all-followers'];

function parseCount(text: string, what: string, spec: string): number {
  const m = /^(\d+(?:\.\d+)?(?:e\d+)?)([kKmM]?)$/.exec(text.replace(/_/g, ''));
  if (!m && /^-\d/.test(text)) throw new PolicySpecError(`policy "${spec}": ${what} must not be negative, got ${text}`);
  if (!m) throw new PolicySpecError(`policy "${spec}": ${what} must be a number like 25000, 25k or 2.5e4`);
  const mult = m[2] === '' ? 1 : m[2].toLowerCase() === 'k' ? 1e3 : 1e6;
  const v = Number(m[1]) * mult;
  if (!Number.isFinite(v) || v < 0) throw new PolicySpecError(`policy "${spec}": ${what} must be a non-negative number`);
  return Math.round(v);
}

/**
 * Parse a policy spec such as `push`, `threshold:25000`, `reader-cap:2000:skip-dormant`.
 * Settings the spec does not name come from `base` (the scenario's policy section).
 */
export function parsePolicy(spec: string, base: FanoutPolicy): FanoutPolicy {
  const parts = spec.trim().split(':');
  const kind = parts[0] as FanoutPolicyKind;
  const policy: FanoutPolicy = { ...base, kind };
  let rest = parts.slice(1);
  const last = rest[rest.length - 1];
  if (last === 'skip-dormant' || last === 'all-followers') {
    policy.skipDormant = last === 'skip-dormant';
    rest = rest.slice(0, -1);
  }
  const arg = rest[0];
  const expectArgs = (n: number) => {
    if (rest.length <= n) return;
    // push:skipdormant: the part meant is most often the dormant suffix, misspelt
    const extra = rest[rest.length - 1];
    const near = nearest(extra, DORMANT_SUFFIXES);
    const meant = near ? `; did you mean "${[kind, ...rest.slice(0, -1), near].join(':')}"?` : ` (valid forms: ${POLICY_FORMS.join(', ')})`;
    throw new PolicySpecError(`policy "${spec}": ${kind} takes ${n === 0 ? 'no value' : 'one value'}, and "${extra}" is not ${DORMANT_SUFFIXES.join(' or ')}${meant}`);
  };
  switch (kind) {
    case 'push':
    case 'pull':
    case 'rate':
      expectArgs(0);
      break;
    case 'threshold':
    case 'adaptive':
      expectArgs(1);
      policy.threshold = arg === undefined ? (base.threshold ?? DEFAULT_CELEBRITY_THRESHOLD) : parseCount(arg, 'the threshold', spec);
      break;
    case 'reader-cap':
      expectArgs(1);
      policy.readerCap = arg === undefined ? (base.readerCap ?? DEFAULT_READER_CAP) : parseCount(arg, 'the reader cap', spec);
      if (policy.readerCap < 1) throw new PolicySpecError(`policy "${spec}": the reader cap must be at least 1`);
      break;
    default: {
      const near = nearest(kind, POLICY_KINDS);
      throw new PolicySpecError(`unknown policy "${spec}"${near ? `; did you mean "${[near, ...parts.slice(1)].join(':')}"?` : ''} (valid forms: ${POLICY_FORMS.join(', ')})`);
    }
  }
  return policy;
}

/**
 * Why the reference server cannot run a policy, or null when it can: `rate` decides per (author,
 * reader) pair from read rates no live process tracks (a simulator what-if). The API and the
 * workers ask the same question (`serve --with-worker --policy rate` passed serve's check once).
 */
export function notLiveRunnable(policy: FanoutPolicy): string | null {
  if (policy.kind !== 'rate') return null;
  return `the rate policy decides per (author, reader) pair from read rates the server and its workers do not track; use one of ${POLICY_FORMS.filter((f) => f !== 'rate').join(', ')}`;
}

/** Whether a spec parses, for a list of policies checked where it is written (the settings it does not name are irrelevant here). */
export function checkPolicySpec(spec: string): void {
  parsePolicy(spec, { kind: 'push', threshold: DEFAULT_CELEBRITY_THRESHOLD, skipDormant: true, readerCap: DEFAULT_READER_CAP, backlogBound: 0, minThreshold: 0 });
}

/** The canonical spec of a policy: parsePolicy(formatPolicy(p), p) gives p back. */
export function formatPolicy(p: FanoutPolicy): string {
  const dormant = p.skipDormant ? ':skip-dormant' : ':all-followers';
  switch (p.kind) {
    case 'threshold':
    case 'adaptive':
      return `${p.kind}:${p.threshold}${dormant}`;
    case 'reader-cap':
      return `reader-cap:${p.readerCap}${dormant}`;
    default:
      return `${p.kind}${dormant}`;
  }
}

/**
 * Is this author's post kept out of followers' timelines and merged in at read time instead?
 * `threshold` is the effective threshold (an adaptive policy moves it). The rate policy decides per
 * pair, see pushPair.
 */
export function pullsAuthor(policy: FanoutPolicy, followers: number, threshold: number): boolean {
  switch (policy.kind) {
    case 'pull':
      return true;
    case 'threshold':
    case 'adaptive':
      return followers > threshold;
    default:
      return false;
  }
}

/**
 * The follower count over which the read path merges an author's recent list, for a policy: an
 * author is pulled on read exactly when followers > this (what pullsAuthor decides at the policy's
 * own threshold). An adaptive policy's lowered thresholds are not here: the authors it pulls below
 * this carry the worker's pulled mark, which the read path honours beside it.
 */
export function readPullThreshold(policy: FanoutPolicy): number {
  switch (policy.kind) {
    case 'pull':
      return 0;
    case 'threshold':
    case 'adaptive':
      return policy.threshold;
    default:
      return Number.MAX_SAFE_INTEGER; // push, reader-cap, rate: nobody is pulled on read by count
  }
}

/**
 * Feeding Frenzy (Silberstein et al., SIGMOD 2010): push a producer's events to a consumer iff
 * producerRate * pushCost <= consumerRate * pullCost, i.e. when the producer posts rarely relative to
 * how often the consumer reads. Rates in events per second, costs in seconds of work.
 */
export function pushPair(producerPostsPerSecond: number, consumerReadsPerSecond: number, pushCost: number, pullCost: number): boolean {
  return producerPostsPerSecond * pushCost <= consumerReadsPerSecond * pullCost;
}

/**
 * Reader-side cap: a reader following more than the cap keeps a delivery with probability cap/follows.
 * `u` is a uniform draw in [0, 1) that must be a deterministic function of (post, reader).
 */
export function keepForReader(policy: FanoutPolicy, readerFollows: number, u: number): boolean {
  if (policy.kind !== 'reader-cap' || readerFollows <= policy.readerCap) return true;
  return u < policy.readerCap / readerFollows;
}

/** The reader-cap draw's salt for a post: a function of the post id only, so a redelivered event draws the same. */
export function postSalt(postId: PostId): number {
  const b = BigInt(postId);
  return mix32(Number(b & 0xffffffffn) ^ mix32(Number((b >> 32n) & 0xffffffffn)));
}

/** keepForReader's uniform draw in [0, 1): a function of (the post's salt, reader) only. */
export function readerDraw(salt: number, readerId: number): number {
  return keyedUniform(salt, readerId);
}

/**
 * The adaptive rule: halve the threshold while the backlog is over the bound (never below the floor),
 * and restore it step by step once the backlog has drained below half the bound.
 */
export function nextAdaptiveThreshold(policy: FanoutPolicy, current: number, backlogWrites: number): number {
  if (backlogWrites > policy.backlogBound) return Math.max(policy.minThreshold, Math.floor(current / 2));
  if (backlogWrites < policy.backlogBound / 2 && current < policy.threshold) return Math.min(policy.threshold, current * 2);
  return current;
}
