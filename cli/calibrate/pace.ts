// Idle gaps between the operations whose latency calibrate measures (settings.ts CALIBRATE.pace).
import { setTimeout as delay } from 'node:timers/promises';

export function sleep(ms: number): Promise<void> {
  return delay(ms).then(() => undefined);
}
