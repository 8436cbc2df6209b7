// The services a replay (or calibrate) measures with clients of its own: Redis (probes, samplers,
// cleanup) and Postgres (the loader, statistics). An unreachable one is one line and exit 3 (DESIGN.md).
import type { Redis } from 'ioredis';
import { connectRedis } from '../../server/cache/redis.js';
import { createStore, probeDatabase, type Store } from '../../server/store/pool.js';
import { InfrastructureError } from '../errors.js';
import { serviceCliError } from '../service-command.js';

export async function connectServiceRedis(url: string, name: string, command = 'replay'): Promise<Redis> {
  try {
    return await connectRedis({ url, connectionName: name, commandTimeoutMs: 30_000 });
  } catch (err) {
    throw serviceCliError(command, err, () => false);
  }
}

export async function openServiceStore(databaseUrl: string, schema: string, name: string, command = 'replay'): Promise<Store> {
  const down = await probeDatabase(databaseUrl, 3_000);
  if (down) throw new InfrastructureError(`${command}: ${down}`);
  return createStore({ databaseUrl, schema, max: 8, applicationName: name });
}
