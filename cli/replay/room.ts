// What this machine can give a replay's starting state: Redis memory (its maxmemory, else half the
// machine's memory, less what it already holds) and, when Postgres is local, half the free disk under
// its data directory. Unknown (a remote Postgres, no right to read its settings) is not checked.
import { statfsSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { Store } from '../../server/store/pool.js';
import type { MachineRoom } from '../../sim/replay/capacity.js';

export async function machineRoom(redis: Redis, store: Store, local: boolean): Promise<MachineRoom> {
  const info = await redis.info('memory');
  const num = (k: string) => Number(new RegExp(`^${k}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  const used = num('used_memory');
  const max = num('maxmemory');
  const system = num('total_system_memory');
  const redisBytes = max > 0 ? max - used : system > 0 ? system / 2 - used : null;
  const redisFrom = max > 0 ? "that Redis's maxmemory leaves" : "that half of this machine's memory leaves Redis";
  let postgresBytes: number | null = null;
  if (local) {
    try {
      const r = await store.pool.query<{ dir: string }>('SELECT current_setting(\'data_directory\') AS dir');
      const st = statfsSync(r.rows[0].dir);
      postgresBytes = (st.bavail * st.bsize) / 2;
    } catch {
      // not a superuser, or not this machine's disk: not checked
    }
  }
  return { redisBytes, postgresBytes, redisFrom, postgresFrom: "that half of the free disk under Postgres's data directory gives" };
}
