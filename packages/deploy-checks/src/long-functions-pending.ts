/**
 * Functions of product code over the length bound (test/function-length.test.ts) that are not
 * split yet and carry no `// long: <reason>`: each is being split, or given its reason, on its
 * own branch. The check fails for an entry that is no longer long, has its reason now or is
 * gone, so the list only shrinks; it is meant to be empty. Never add to it: split the function,
 * or write why it is long on the line above it.
 *
 * An entry is `<repo-relative file>#<function name>` (a function expression without a name of
 * its own: `(anonymous)`); one entry per function, so a name found twice is listed twice.
 */
export const LONG_FUNCTIONS_PENDING: readonly string[] = [];
