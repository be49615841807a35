/** Helpers of edge validation that every wing's strict bodies share. */

/** The error of a strict body: its unknown fields named, or that it must be an object of this shape. */
export function unknownFieldMessage(shape: string) {
  return (issue: { code?: string; keys?: string[] }) =>
    issue.code === 'unrecognized_keys'
      ? `Unknown field ${(issue.keys ?? []).map((k) => `"${k}"`).join(', ')}; the body is ${shape}`
      : `Body must be a JSON object ${shape}`;
}
