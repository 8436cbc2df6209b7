// docker-compose.yml, the path past one machine: no Docker engine runs on the development machines,
// so `docker compose up` itself is not tested here. What is: the file is a valid Compose file (the
// Compose CLI's own `config` check, where a Compose CLI is installed: `docker compose` or Debian's
// docker-compose), the API's and the workers' commands and environment are accepted by feedlab's
// own flag and configuration parsers and point at the services of the file, and the Kafka service
// is a single-node KRaft broker those services can reach.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseCommandLine } from '../../cli/program.js';
import { loadServeConfig, type ServeFlags } from '../../server/serve.js';
import { loadWorkerConfig, type WorkerFlags } from '../../server/worker/config.js';
import { CI } from './services.js';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  deploy?: { replicas?: number };
  depends_on?: Record<string, { condition: string }>;
}

const FILE = new URL('../../docker-compose.yml', import.meta.url);
const compose = parse(readFileSync(FILE, 'utf8')) as { services: Record<string, Service> };
const services = compose.services;
const env = (s: Service): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));

/** A Compose CLI on this machine, or null. */
function composeCli(): string[] | null {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) return ['docker-compose'];
  return null;
}

describe('docker-compose.yml', () => {
  it('has Redis, Postgres, Kafka, the API and two workers, the feed services started after their stores', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'kafka', 'postgres', 'redis', 'worker']);
    expect(services.worker.deploy?.replicas).toBe(2);
    for (const name of ['api', 'worker']) {
      expect(services[name].build).toBe('.');
      expect(services[name].depends_on).toEqual({
        redis: { condition: 'service_healthy' },
        postgres: { condition: 'service_healthy' },
        kafka: { condition: 'service_started' },
      });
    }
  });

  it('gives the API and the workers commands and settings feedlab accepts, pointing at the services of the file', async () => {
    const [serveCmd, ...serveArgs] = services.api.command ?? [];
    expect(serveCmd).toBe('serve');
    const serveLine = await parseCommandLine([serveCmd, ...serveArgs]);
    expect([serveLine.command, serveLine.args]).toEqual(['serve', []]);
    const serve = loadServeConfig(serveLine.values as ServeFlags, env(services.api));
    expect([serve.host, serve.port, serve.bus, serve.kafkaBrokers]).toEqual(['0.0.0.0', 8080, 'kafka', ['kafka:9092']]);
    expect(new URL(serve.redisUrl).host).toBe('redis:6379');
    expect(new URL(serve.databaseUrl).host).toBe('postgres:5432');

    const [workerCmd, ...workerArgs] = services.worker.command ?? [];
    expect(workerCmd).toBe('worker');
    const worker = loadWorkerConfig((await parseCommandLine([workerCmd, ...workerArgs])).values as WorkerFlags, env(services.worker));
    expect([worker.bus, worker.kafkaBrokers, worker.concurrency]).toEqual(['kafka', ['kafka:9092'], 4]);
    expect(new URL(worker.databaseUrl).host).toBe('postgres:5432');

    // The database the URL names is the one the Postgres service creates.
    const pg = env(services.postgres);
    const url = new URL(serve.databaseUrl);
    expect([url.username, url.password, url.pathname]).toEqual([pg.POSTGRES_USER, pg.POSTGRES_PASSWORD, `/${pg.POSTGRES_DB}`]);
  });

  it('runs Kafka as a single-node KRaft broker advertised where the feed services look for it', () => {
    const k = env(services.kafka);
    expect(k.KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(k.KAFKA_CONTROLLER_QUORUM_VOTERS).toBe(`${k.KAFKA_NODE_ID}@kafka:9093`);
    expect(k.KAFKA_ADVERTISED_LISTENERS).toBe(`PLAINTEXT://${env(services.api).KAFKA_BROKERS}`);
    expect(k.KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR).toBe('1');
  });

  const cli = composeCli();
  if (!cli && !CI) console.warn('\n!!! SKIPPED the Compose CLI check of docker-compose.yml: no `docker compose` or docker-compose here (under CI=true this fails) !!!\n');
  it.skipIf(!cli && !CI)('is a valid Compose file by the Compose CLI\'s own check', () => {
    expect(cli, 'a Compose CLI (Debian: apt-get install docker-compose)').not.toBeNull();
    const [bin, ...pre] = cli as string[];
    // Throws with the CLI's message when the file is refused.
    execFileSync(bin, [...pre, '-f', FILE.pathname, 'config', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
  });
});
