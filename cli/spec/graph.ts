// feedlab graph generate | import | stats: make, convert and describe follower graphs.
import { GENERATE_DEFAULTS } from '../../sim/graph/generate.js';
import { DEFAULT_THRESHOLDS } from '../../sim/graph/stats.js';
import { command } from './command-spec.js';

const QUIET = { type: 'boolean', short: 'q', help: 'no progress on stderr' } as const;
const UNDIRECTED = { type: 'boolean', help: 'an edge list: add both directions of every line' } as const;

export const GENERATE_OPTIONS = {
  users: { type: 'string', arg: 'N', required: true, help: 'accounts' },
  'avg-follows': { type: 'string', arg: 'K', required: true, help: 'mean followees per account (lognormal)' },
  alpha: { type: 'string', arg: 'A', required: true, help: 'the exponent of the follower counts\' power-law tail (> 1)' },
  out: { type: 'string', arg: 'FILE', short: 'o', required: true, help: 'the .fgraph file to write' },
  seed: { type: 'string', arg: 'S', help: 'the seed (default 1): same arguments and seed, same bytes' },
  'max-follows': { type: 'string', arg: 'M', help: `cap on an account's followees (default ${GENERATE_DEFAULTS.maxFollows})` },
  'follows-sigma': { type: 'string', arg: 'X', help: `sigma of the lognormal followee counts (default ${GENERATE_DEFAULTS.followsSigma})` },
  celebrity: { type: 'string', arg: 'NAME=F', multiple: true, help: 'add an account NAME followed by F users (F <= 1: a share of the users); repeatable' },
  celebrities: { type: 'string', arg: 'COUNT=F', multiple: true, help: 'add COUNT such accounts; repeatable' },
  threads: {
    type: 'string',
    arg: 'N',
    help: "generate on N threads (default: the machine's cores; 1: this one alone). The bytes are the same whatever N",
  },
  quiet: QUIET,
} as const;

export const IMPORT_OPTIONS = {
  out: { type: 'string', arg: 'OUT', short: 'o', help: "the .fgraph to write (default: the input's name with .fgraph, in the current directory)" },
  undirected: UNDIRECTED,
  quiet: QUIET,
} as const;

export const STATS_OPTIONS = {
  json: { type: 'boolean', help: 'print the feedlab.graph-stats/1 document' },
  thresholds: { type: 'string', arg: 'T1,T2,...', help: `count the accounts over each follower threshold (default ${DEFAULT_THRESHOLDS.join(',')})` },
  top: { type: 'string', arg: 'N', help: 'the N accounts with most followers' },
  undirected: UNDIRECTED,
  quiet: QUIET,
} as const;

const load = () => import('../commands/graph.js');

export const graph = command({
  name: 'graph',
  summary: 'generate, import and describe follower graphs (.fgraph)',
  options: {},
  examples: [
    ['feedlab graph generate --users 100000 --avg-follows 100 --alpha 2.1 -o g.fgraph', 'a power-law graph'],
    ['feedlab graph import data/soc-Slashdot0902.txt.gz', 'a real graph (SNAP) to .fgraph'],
  ],
  subcommands: [
    command({
      name: 'generate',
      summary: 'a directed power-law follower graph',
      description: `A directed power-law follower graph. Follower counts have a power-law tail of exponent --alpha;
followee counts are lognormal with mean --avg-follows and sigma --follows-sigma, capped at
--max-follows. Same arguments and seed, same bytes, on any number of --threads (a graph of 16M
followees or more, celebrities' followers not counted, is drawn in blocks that the threads share).`,
      options: GENERATE_OPTIONS,
      examples: [
        ['feedlab graph generate --users 1000000 --avg-follows 20 --alpha 2.2 -o 1m.fgraph', '1M users, 20M follows'],
        ['feedlab graph generate --users 10000 --avg-follows 50 --alpha 2.1 --celebrity star=0.3 -o s.fgraph', 'one account followed by 30%'],
      ],
      run: async () => (await load()).generate,
    }),
    command({
      name: 'import',
      summary: 'a SNAP/KONECT edge list to .fgraph',
      description: 'A SNAP/KONECT edge list ("source target" per line, plain or gzip, # and % comments) to .fgraph.',
      args: [{ name: '<file>', help: 'the edge list' }],
      options: IMPORT_OPTIONS,
      examples: [['feedlab graph import data/soc-Slashdot0902.txt.gz', 'writes soc-Slashdot0902.fgraph']],
      run: async () => (await load()).importCommand,
    }),
    command({
      name: 'stats',
      summary: "a graph's degrees and the power-law tail of its follower counts",
      description: `Nodes, edges, reciprocity, follower and followee percentiles, accounts over each follower
threshold, the top accounts, and the power-law tail of follower counts.`,
      args: [{ name: '<file>', help: 'a .fgraph or an edge list' }],
      options: STATS_OPTIONS,
      examples: [['feedlab graph stats soc-Slashdot0902.fgraph --thresholds 100,1000', 'accounts over 100 and 1,000 followers']],
      run: async () => (await load()).stats,
    }),
  ],
});
