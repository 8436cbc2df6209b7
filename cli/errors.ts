// Exit codes (DESIGN.md, conventions) and the errors that map onto them.
export { InfrastructureError, InputError } from '../sim/errors.js';

export const EXIT_OK = 0;
export const EXIT_SLO_FAILED = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_INFRASTRUCTURE = 3;
/** A run stopped by the user (Ctrl-C, or q on the dashboard), like a shell's 128 + SIGINT. */
export const EXIT_INTERRUPTED = 130;
