// feedlab worker: run fan-out workers (consumers of the post-event log) and optionally the outbox relay.
import { describeWithCluster, readCacheCluster, SettingsReader } from '../../server/settings.js';
import { describeWorkerConfig, loadWorkerConfig, WorkerConfigError, type WorkerFlags } from '../../server/worker/config.js';
import { PUBLISH_REQUEST, runWorker } from '../../server/worker/process.js';
import { startWhenReachable } from '../../server/start-up.js';
import type { Values } from '../spec/options.js';
import type { WORKER_OPTIONS } from '../spec/service.js';
import { EXIT_OK } from '../errors.js';
import { serviceCliError } from '../service-command.js';

const asCliError = (err: unknown): unknown => serviceCliError('worker', err, (e) => e instanceof WorkerConfigError);

export async function run(values: Values<typeof WORKER_OPTIONS>): Promise<number> {
  let config;
  let redisCluster;
  try {
    config = loadWorkerConfig(values as WorkerFlags);
    const fail = (m: string) => new WorkerConfigError(m);
    const where = values['redis-url'] !== undefined ? '--redis-url' : 'REDIS_URL';
    redisCluster = readCacheCluster(values, process.env, 'redis-cluster', new SettingsReader(fail), fail, { bus: config.bus, redisUrl: config.redisUrl, where });
  } catch (err) {
    throw asCliError(err);
  }
  const info = (line: string) => {
    if (!values.quiet) process.stderr.write(`feedlab worker: ${line}\n`);
  };
  const always = (line: string) => process.stderr.write(`feedlab worker: ${line}\n`);
  for (const line of describeWithCluster(describeWorkerConfig(config), redisCluster, config.keyPrefix)) info(line);

  const stop = new AbortController();
  let signals = 0;
  const onSignal = (name: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      info(`${name}: finishing the batch in hand, then stopping (${name} again to stop at once)`);
      stop.abort();
    } else {
      always(`${name} again: stopping at once (unacknowledged events will be delivered again)`);
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // SIGUSR2: publish the figures now (replay and calibrate ask once the fan-out has settled)
  const publishRequests = new EventTarget();
  const onPublishRequest = () => publishRequests.dispatchEvent(new Event(PUBLISH_REQUEST));
  process.on('SIGUSR2', onPublishRequest);
  try {
    // a service down at start-up is waited for (server/start-up.ts), unless --fail-fast
    const result = await startWhenReachable(
      (started) =>
        runWorker(config, {
          signal: stop.signal,
          redisCluster,
          onReady: started,
          publishRequests,
          // Status and start-up lines obey --quiet; errors do not.
          log: (line) => (/^(ready|policy now|migrations|\d+ posts)/.test(line) ? info(line) : always(line)),
        }),
      { signal: stop.signal, failFast: config.failFast, say: always },
    );
    if (result === null) {
      info('stopped before the services answered');
      return EXIT_OK;
    }
    info(
      `stopped after ${result.seconds.toFixed(1)} s: ${result.counters.eventsCreated} posts, ${result.counters.timelineWrites} timeline writes (${Math.round(result.writesPerSecond)}/s)`,
    );
    if (values.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return EXIT_OK;
  } catch (err) {
    throw asCliError(err);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGUSR2', onPublishRequest);
  }
}
