/**
 * @tillflow/callback — see the package README and docs/architecture.md.
 */
export const packageName = "@tillflow/callback"
