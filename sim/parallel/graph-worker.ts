// One thread of a graph generated on worker threads (generate-graph.ts): each job is a block of the
// followee draws, a range of rows to sort, or a range of rows of a transpose, over buffers in shared memory.
import { countColumns, scatterRows, sortRows } from '../graph/csr.js';
import { blockRng, drawBlock } from '../graph/stub-draws.js';
import { serveJobs } from './job-thread.js';
import type { GraphJob, GraphJobResult } from './generate-graph.js';

serveJobs<GraphJob, GraphJobResult, number>((job, say) => {
  switch (job.kind) {
    case 'draw':
      return drawBlock(job.plan, job.block, job.out, blockRng(job.plan, job.block), (f) => say(f, f >= 1));
    case 'count':
      countColumns(job.rows, job.from, job.to, job.counts);
      return null;
    case 'scatter':
      scatterRows(job.rows, job.from, job.to, job.cursor, job.ids);
      return null;
    case 'sort':
      sortRows(job.rows, job.from, job.to);
      return null;
  }
});
