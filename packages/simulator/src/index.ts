/**
 * @tillflow/simulator — see the package README and docs/architecture.md.
 */
export const packageName = "@tillflow/simulator"
