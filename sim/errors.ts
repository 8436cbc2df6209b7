// Errors a user can act on. They live beside the domain code that raises them (the CLI maps
// them onto exit codes), so that code flows one way: cli -> sim.

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
