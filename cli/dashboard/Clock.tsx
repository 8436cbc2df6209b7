// The simulated clock with a progress bar, the wall time and the ETA; or the preparation's progress.
import { Text } from 'ink';
import { sweepFraction, type DashboardState } from './state.js';
import { bar, clock, wall } from './format.js';

export function Clock({ state, now, color, width }: { state: DashboardState; now: number; color: boolean; width: number }) {
  // the bar gets what the clock, percentage, wall time and ETA (about 56 characters) leave of the width
  const BAR = Math.max(10, Math.min(30, width - 56));
  const c = state.current;
  if (state.phase === 'prepare' || !c) {
    const p = state.prepare;
    return (
      <Text wrap="truncate-end">
        preparing  <Text color={color ? 'cyan' : undefined}>{bar(p.fraction, BAR)}</Text> {`${Math.round(p.fraction * 100)}%`.padStart(4)}  {p.detail}
      </Text>
    );
  }
  const fraction = c.durationSeconds > 0 ? c.atSeconds / c.durationSeconds : 1;
  const elapsed = (now - c.startedWall) / 1000;
  // a sweep's ETA counts the policies still to run at the pace of those done so far
  const total = sweepFraction(state);
  const since = (now - (state.firstStartWall ?? c.startedWall)) / 1000;
  const eta = total > 0.005 ? (since / total) * (1 - total) : NaN;
  const etaText = state.stopRequested ? 'stopping' : Number.isFinite(eta) ? `ETA ${wall(eta)}` : 'ETA -';
  return (
    <Text wrap="truncate-end">
      {state.source === 'replay' ? 'replayed' : 'simulated'} {clock(c.atSeconds)} / {clock(c.durationSeconds)}
      {state.source === 'replay' ? ` (x${state.timeScale})` : ''}  <Text color={color ? 'cyan' : undefined}>{bar(fraction, BAR)}</Text>{' '}
      {`${Math.floor(fraction * 100)}%`.padStart(4)}  wall {wall(elapsed)}  {etaText}
    </Text>
  );
}
