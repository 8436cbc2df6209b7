// Whether run and sweep show the Ink dashboard, and loading it: kept apart from the dashboard
// itself, so plain runs never load React.

/** The smallest terminal the dashboard fits: a taller frame would make Ink clear the screen on every redraw. */
export const MIN_COLUMNS = 60;
export const MIN_ROWS = 20;

/**
 * Only for a person at a terminal: stdout a TTY of at least MIN_COLUMNS x MIN_ROWS, not under CI
 * (CI set to anything but "" / 0 / false), and none of --json, --quiet, --no-dashboard.
 */
export function dashboardWanted(values: { json?: boolean; quiet?: boolean; 'no-dashboard'?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== '0' && env.CI !== 'false';
  const out = process.stdout;
  const fits = (out.columns ?? 0) >= MIN_COLUMNS && (out.rows ?? 0) >= MIN_ROWS;
  return out.isTTY === true && fits && !ci && !values.json && !values.quiet && !values['no-dashboard'];
}

/**
 * The dashboard module, with React in its production build. The development build records a
 * performance track and diffs every prop on every render: at ten redraws a second that stalls the
 * main thread for seconds, and q goes unread. NODE_ENV must be set before React is first loaded,
 * and CommonJS packages imported by ES modules run while the import graph is linked, before any
 * module body: so here, before the import, not in a module the dashboard imports.
 */
export async function loadDashboard(): Promise<typeof import('./session.js')> {
  process.env.NODE_ENV = 'production';
  return import('./session.js');
}
