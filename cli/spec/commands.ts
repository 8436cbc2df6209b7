// Every command, in the order `feedlab --help` lists them: the simulator's first, then the live
// stack's, then the reference server's own.
import type { CommandSpec } from './command-spec.js';
import { graph } from './graph.js';
import { calibrate, compare, replay } from './live.js';
import { loadGraph, migrate, serve, token, worker } from './service.js';
import { estimate, plan, report, run, sweep } from './simulate.js';

export const COMMANDS: readonly CommandSpec[] = [estimate, run, sweep, plan, replay, calibrate, compare, report, graph, migrate, loadGraph, token, serve, worker];
