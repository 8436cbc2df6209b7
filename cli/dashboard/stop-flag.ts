// The stop the dashboard asks for (session.tsx writes it once), over a SharedArrayBuffer every thread
// sees (sim-worker.ts, policy-thread.ts, replay-worker.ts read it): [0] the simulated minute on
// screen (0: no stop), [1] the index + 1 of the policy on screen (0: none).
export class StopFlag {
  private readonly flag: Int32Array;

  /** Over `buffer` (a new one when none: the asking side's). */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT)) {
    this.flag = new Int32Array(buffer);
  }

  /** Ask once for a stop at `minute` (at least 1) of policy `onScreen` (null: none on screen); false when already asked. */
  ask(minute: number, onScreen: number | null): boolean {
    if (this.requested()) return false;
    // the policy first: a thread that sees the minute reads which policy it was for
    Atomics.store(this.flag, 1, (onScreen ?? -1) + 1);
    Atomics.store(this.flag, 0, minute);
    return true;
  }

  requested(): boolean {
    return Atomics.load(this.flag, 0) !== 0;
  }

  /** The simulated second the stop asks for: the end of the minute on screen. */
  atSeconds(): number {
    return Atomics.load(this.flag, 0) * 60;
  }

  /** The policy on screen when the stop came (-1: none, or no stop). */
  onScreen(): number {
    return Atomics.load(this.flag, 1) - 1;
  }
}
