/**
 * Limits on the JSON tillflow takes in from outside (the intake's requests, the results
 * terminals post to the callback receiver): one home, so the edges cannot drift apart.
 */

/**
 * The deepest nesting of arrays and objects an incoming body may have. The service's own
 * payloads are a few levels deep; the steps after the parse (sanitising, hashing,
 * decoding) walk the value recursively, and a body of a few hundred KiB can nest 100,000
 * deep: past the call stack. Deeper bodies are refused with a 400 saying so.
 */
export const maxDepth = 32
