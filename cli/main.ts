#!/usr/bin/env node
// The feedlab command line: the program (cli/program.ts) from the commands' specs (cli/spec), one
// file per command's code under cli/commands; errors become one line and an exit code here.
import { EXIT_BAD_INPUT, EXIT_INFRASTRUCTURE, InfrastructureError, InputError } from './errors.js';
import { runCli } from './program.js';

async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  const args = argv.filter((a) => a !== '--debug');
  try {
    return await runCli(args);
  } catch (err) {
    if (debug) process.stderr.write(`${(err as Error).stack}\n`);
    if (err instanceof InputError) {
      process.stderr.write(`feedlab: ${err.line()}\n`);
      return EXIT_BAD_INPUT;
    }
    if (err instanceof InfrastructureError) {
      process.stderr.write(`feedlab: ${err.message}\n`);
      return EXIT_INFRASTRUCTURE;
    }
    const bad = pathError(err);
    if (bad) {
      process.stderr.write(`feedlab: ${bad}\n`);
      return EXIT_BAD_INPUT;
    }
    if (!debug) process.stderr.write(`feedlab: internal error: ${(err as Error).message} (run with --debug for the stack)\n`);
    return 70;
  }
}

/** What a user gave that the file system refused (a directory for a file, a missing path, no permission), in one line; null for anything else. */
function pathError(err: unknown): string | null {
  const e = err as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof e.path !== 'string') return null;
  const why: Record<string, string> = {
    EISDIR: 'is a directory, not a file',
    ENOTDIR: 'a part of the path is not a directory',
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
  };
  return e.code !== undefined && why[e.code] ? `${e.path}: ${why[e.code]}` : null;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`feedlab: ${String(err)}\n`);
    process.exitCode = 70;
  },
);
