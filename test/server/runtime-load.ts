// Load for the runtime-probe tests: a held event loop and a burst of garbage.

/** Hold the event loop for ms, as a long synchronous task does. */
export const block = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
};

/** About 100 MB of short-lived arrays that escape into a list (so V8 cannot elide them): several young-generation collections. */
export const churn = () => {
  let live: number[][] = [];
  let kept = 0;
  for (let i = 0; i < 1_000_000; i++) {
    live.push([i, i + 1, i + 2, i + 3]);
    if (live.length === 10_000) {
      kept += live.length;
      live = [];
    }
  }
  return kept;
};
