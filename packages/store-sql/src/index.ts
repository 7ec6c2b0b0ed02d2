/**
 * @tillflow/store-sql — see the package README and docs/architecture.md.
 */
export const packageName = "@tillflow/store-sql"
