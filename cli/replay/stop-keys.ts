// Stopping a replay from the terminal: q or Ctrl-C (or SIGINT/SIGTERM) stops the measured window at
// once (the driver stops sending, the fan-out settles, the partial result is written); a second one
// quits without waiting, and the watchdog (reaper.ts) stops the processes and removes the scratch
// space once this process is gone.
const CTRL_C = '\u0003';

export function stopKeys(stop: AbortController, log: (line: string) => void): { release(): void } {
  let presses = 0;
  const press = (what: string) => {
    presses++;
    if (presses === 1) {
      log(`${what}: stopping the window; the partial report follows (${what} again to quit at once)`);
      stop.abort();
    } else {
      process.stderr.write(`feedlab replay: ${what} again: quitting; the watchdog stops the stack and removes the scratch space\n`);
      process.exit(130);
    }
  };
  const onSignal = (signal: NodeJS.Signals) => press(signal === 'SIGINT' ? 'Ctrl-C' : signal);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const tty = process.stdin.isTTY === true;
  const onData = (d: Buffer) => {
    const s = d.toString('utf8');
    if (s.includes(CTRL_C)) press('Ctrl-C');
    else if (s.toLowerCase().includes('q')) press('q');
  };
  if (tty) {
    process.stdin.setRawMode(true);
    process.stdin.on('data', onData);
    process.stdin.resume();
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      if (tty) {
        process.stdin.off('data', onData);
        process.stdin.setRawMode(false);
        process.stdin.pause();
      }
    },
  };
}
