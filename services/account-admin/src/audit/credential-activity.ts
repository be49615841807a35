/** How the Activity page words the credential actions of the audit trail (keys, trusts, the secret, the state). */
export const CREDENTIAL_ACTION_TEXT: Record<string, string> = {
  'service_account.key_add': 'Added a key to',
  'service_account.key_remove': 'Removed a key of',
  'service_account.trust_add': 'Trusted a workload for',
  'service_account.trust_remove': 'Removed a trusted workload of',
  'service_account.secret_add': 'Added a second secret to',
  'service_account.secret_remove': 'Removed a secret of',
  'service_account.disable': 'Disabled',
  'service_account.enable': 'Enabled',
  'service_account.delegation_change': 'Changed where others may be acted for by',
};

/** The secret, key or trust an event names, as short text parts. */
export function describeCredentialDetails(details: Record<string, unknown>): string[] {
  const key = details.key as { id?: string; alg?: string | null } | undefined;
  const trust = details.trust as { issuer?: string | null; subject?: string | null } | undefined;
  const secret = details.secret as { id?: string; expires_at?: string | null } | undefined;
  const parts: string[] = [];
  if (secret?.id)
    parts.push(`secret ${secret.id}${secret.expires_at ? ` (expires ${secret.expires_at})` : ''}`);
  if (key?.id) parts.push(`key ${key.id}${key.alg ? ` (${key.alg})` : ''}`);
  if (trust?.subject) parts.push(`${trust.subject}${trust.issuer ? ` from ${trust.issuer}` : ''}`);
  const delegations = (details.delegations as { to?: unknown } | undefined)?.to;
  if (Array.isArray(delegations))
    parts.push(
      delegations.length === 0
        ? 'acts for no one'
        : `acts for others at ${delegations.map((d: { audience?: string; scope?: string }) => `${d.audience} (${d.scope})`).join(', ')}`,
    );
  return parts;
}

/** `DPoP required` / `DPoP not required` (and whether it receives signals) for an update that changed it. */
export function describeTokenBinding(details: Record<string, unknown>): string | undefined {
  const change = details.dpop_bound_access_tokens as { to?: unknown } | undefined;
  const signals = details.receive_signals as { from?: unknown; to?: unknown } | undefined;
  const parts: string[] = [];
  if (typeof change?.to === 'boolean')
    parts.push(change.to ? 'DPoP required' : 'DPoP not required');
  if (typeof signals?.to === 'boolean' && signals.to !== signals.from)
    parts.push(signals.to ? 'receives signals' : 'no longer receives signals');
  return parts.length === 0 ? undefined : parts.join('; ');
}
