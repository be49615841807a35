/**
 * How a token names the credential that obtained it (its `cred` claim, decision 0035), and how a
 * removal names what it revokes: `secret:<id>`, `key:<id>` (the key's id, its kid or
 * thumbprint) or `trust:<id>`. The kind keeps a key and a secret of one account apart even
 * were their ids equal; the revocation is keyed by the principal, so another account's equal
 * name means nothing here.
 */
export type CredentialKind = 'secret' | 'key' | 'trust';

export function credentialName(kind: CredentialKind, id: string): string {
  return `${kind}:${id}`;
}
