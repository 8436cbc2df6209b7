// Exit codes and the errors that map onto them (DESIGN.md, conventions).

export const EXIT_OK = 0;
export const EXIT_SLO_FAILED = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_INFRASTRUCTURE = 3;

/** Bad usage or bad input: one clear line, exit 2. `where` is "file:line:col" when known. */
export class InputError extends Error {
  constructor(message: string, readonly where?: string) {
    super(message);
    this.name = 'InputError';
  }
  line(): string {
    return this.where ? `${this.where}: ${this.message}` : this.message;
  }
}

/** A service we need is unreachable: exit 3. */
export class InfrastructureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InfrastructureError';
  }
}
