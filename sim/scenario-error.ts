/** A scenario that is valid on its own but impossible with its graph or options: exit 2. */
export class ScenarioError extends Error {}
