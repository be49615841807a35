/**
 * The contract between bearer verification and the revocation map (docs/architecture.md).
 * Bearer verification calls `check` after the signature and claims are valid.
 */
export type RevocationVerdict = 'valid' | 'revoked' | 'unavailable';

export interface RevocationChecker {
  /**
   * Whether a token of principal `sub` in `tenant` minted at token version `ver`, obtained with
   * `credential` (its `cred` claim; undefined when it names none), may be used.
   * 'unavailable' means neither the live map nor the token service could answer: fail closed (503).
   * Synchronous answers (the common case, from memory) avoid a promise per request.
   */
  check(
    tenant: string,
    sub: string,
    ver: number,
    credential?: string,
  ): RevocationVerdict | Promise<RevocationVerdict>;
  /** True once the first snapshot is loaded (for /readyz). */
  isReady(): boolean;
}
