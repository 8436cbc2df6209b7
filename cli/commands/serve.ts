// feedlab serve: run the reference server's HTTP API (with the outbox relay, and optionally the
// fan-out worker) in this process.
import { TokenConfigError } from '../../server/auth/token.js';
import { describeServeConfig, loadServeConfig, ServeConfigError, startServer, type ServeFlags } from '../../server/serve.js';
import type { Values } from '../spec/options.js';
import type { SERVE_OPTIONS } from '../spec/service.js';
import { EXIT_OK, InputError } from '../errors.js';
import { serviceCliError } from '../service-command.js';
import { DEFAULT_RETRY_AFTER_SECONDS } from '../../server/http/app.js';
import { unavailableWhat } from '../../server/http/errors.js';
import { listenWhileStarting, type StartingListener } from '../../server/http/starting-listener.js';
import { startWhenReachable } from '../../server/start-up.js';

/** The server's errors as the CLI's; a port that cannot be listened on is bad input. */
function asCliError(err: unknown): unknown {
  const code = (err as { code?: string }).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return new InputError(`serve: cannot listen there (${code}: ${(err as Error).message}); choose another --port or --host`);
  }
  return serviceCliError('serve', err, (e) => e instanceof ServeConfigError || e instanceof TokenConfigError || (e instanceof Error && e.name === 'WorkerConfigError'));
}

export async function run(values: Values<typeof SERVE_OPTIONS>): Promise<number> {
  const flags = values as ServeFlags;
  let config;
  try {
    config = loadServeConfig(flags);
  } catch (err) {
    throw asCliError(err);
  }
  const info = (line: string) => {
    if (!values.quiet) process.stderr.write(`feedlab serve: ${line}\n`);
  };
  const always = (line: string) => process.stderr.write(`feedlab serve: ${line}\n`);
  for (const line of describeServeConfig(config)) info(line);

  // Signals stop the server once it runs; one arriving during start-up stops it right after.
  const stop = new AbortController();
  let signals = 0;
  const onSignal = (name: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      info(`${name}: finishing the requests in flight, then stopping (${name} again to stop at once)`);
      stop.abort();
    } else {
      always(`${name} again: stopping at once`);
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    let server;
    // A service down at start-up is waited for (server/start-up.ts), unless --fail-fast; meanwhile
    // the port answers /healthz 200, /readyz and everything else 503 (http/starting-listener.ts).
    let starting: StartingListener | null = null;
    let waitingFor: string | null = null;
    let cannotAnswer = false;
    /** From the second attempt on, the port answers while the start waits (opened before the attempt, so nothing races it). */
    const answerWhileStarting = async () => {
      if (waitingFor === null || starting || cannotAnswer) return;
      try {
        starting = await listenWhileStarting(config.host, config.port, DEFAULT_RETRY_AFTER_SECONDS, waitingFor);
        always(`answering 503 on ${starting.url} until the services answer`);
      } catch (err) {
        cannotAnswer = true;
        always(`cannot answer while starting (${(err as Error).message}); the port stays closed until then`);
      }
    };
    try {
      server = await startWhenReachable(
        async () => {
          await answerWhileStarting();
          return startServer(starting ? { ...config, port: starting.port } : config, {
            // Start-up and shutdown lines obey --quiet; trouble does not.
            log: (line) => (/^(migrations|listening|event log reachable|worker: (ready|policy now|migrations|bus|redis|postgres|policy|timelines|fan-out|relay))/.test(line) ? info(line) : always(line)),
            beforeListen: async () => {
              await starting?.close();
              starting = null;
            },
          });
        },
        {
          signal: stop.signal,
          failFast: config.failFast,
          say: (line, outage) => {
            always(line);
            // the address stays in the log: a client is told which service only
            waitingFor = unavailableWhat(outage) ?? 'a service';
            starting?.waitingFor(waitingFor);
          },
        },
      );
    } catch (err) {
      await (starting as StartingListener | null)?.close();
      throw asCliError(err);
    }
    if (server === null) {
      await (starting as StartingListener | null)?.close();
      info('stopped before the services answered');
      return EXIT_OK;
    }
    const stopped = new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      else stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      await Promise.race([stopped, server.failed]);
    } catch (err) {
      always(`stopping: ${(err as Error).message}`);
      await server.close();
      throw asCliError(err);
    }
    await server.close();
    info('stopped');
    return EXIT_OK;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
