/**
 * The audited administration of a service account's credentials: its public keys, trusted
 * workloads and secrets, read, added and removed, by the same rules as the account itself
 * (managed-service-accounts.ts). Adding one grants access, so it is undone when the audit event
 * cannot be written (`recordOrUndo`) and needs a recent second factor; removing one revokes the
 * tokens it obtained and cannot be undone, so its event is retried (`recordIrreversible`).
 */
import { NotFound } from '@plant/shared/api';
import type {
  ServiceAccountCredentials,
  ServiceAccountKey,
  ServiceAccountSecretWithValue,
  ServiceAccountTrust,
} from '@plant/shared/token-service-client';
import { recordIrreversible, recordOrUndo, type AuditAction } from '../audit/index.js';
import {
  actorLabel,
  assertCanManage,
  assertRecentFactor,
  type Actor,
  type RequestMeta,
} from '../platform/index.js';
import { assertClientId, auditEvent, type ServiceAccountDeps } from './managed-service-accounts.js';
import {
  isKeyId,
  isSecretId,
  isTrustId,
  type AddKeyInput,
  type AddSecretInput,
  type AddTrustInput,
} from './service-account-credential-validators.js';

/** Every credential of the account (the secret only as its dates): readable by every role, like the account itself. */
export async function getServiceAccountCredentials(
  deps: ServiceAccountDeps,
  actor: Actor,
  clientId: string,
): Promise<ServiceAccountCredentials> {
  assertClientId(clientId);
  return deps.tokenService.getCredentials(actor.tenant, clientId);
}

/** How one kind of credential is added: its audit action, the call, what the trail records and how it is undone. */
interface CredentialAddition<T> {
  action: AuditAction;
  add(): Promise<T>;
  details(added: T): Record<string, unknown>;
  undo(added: T): Promise<unknown>;
}

/**
 * A credential added to the account (the caller already checked: may manage, a recent factor):
 * audited, or removed again when the audit trail cannot take it.
 */
async function addCredential<T>(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
  addition: CredentialAddition<T>,
): Promise<T> {
  assertClientId(clientId);
  const account = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  const added = await addition.add();
  await recordOrUndo(
    deps,
    auditEvent(actor, meta, addition.action, account, addition.details(added)),
    () => addition.undo(added),
  );
  return added;
}

/** A public key for private_key_jwt. */
export function addServiceAccountKey(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
  input: AddKeyInput,
): Promise<ServiceAccountKey> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'add-key');
  return addCredential(deps, actor, meta, clientId, {
    action: 'service_account.key_add',
    add: () =>
      deps.tokenService.addKey(
        actor.tenant,
        clientId,
        input.jwk !== undefined ? { jwk: input.jwk } : { pem: input.pem! },
        actorLabel(actor),
      ),
    details: (key) => ({ key: { id: key.id, alg: key.alg, thumbprint: key.thumbprint } }),
    undo: (key) => deps.tokenService.removeKey(actor.tenant, clientId, key.id),
  });
}

/** A trusted workload. */
export function addServiceAccountTrust(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
  input: AddTrustInput,
): Promise<ServiceAccountTrust> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'add-trust');
  return addCredential(deps, actor, meta, clientId, {
    action: 'service_account.trust_add',
    add: () =>
      deps.tokenService.addTrust(
        actor.tenant,
        clientId,
        { issuer: input.issuer, subject: input.subject, audience: input.audience },
        actorLabel(actor),
      ),
    details: (trust) => ({
      trust: {
        id: trust.id,
        issuer: trust.issuer,
        subject: trust.subject,
        audience: trust.audience,
      },
    }),
    undo: (trust) => deps.tokenService.removeTrust(actor.tenant, clientId, trust.id),
  });
}

/**
 * "Add a secret": a second secret beside the first (at most two live), shown once in the
 * answer, optionally expiring; nothing is revoked. Audited with its id and expiry (never the
 * secret).
 */
export function addServiceAccountSecret(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
  input: AddSecretInput,
): Promise<ServiceAccountSecretWithValue> {
  assertCanManage(actor);
  assertRecentFactor(actor, 'add-secret');
  return addCredential(deps, actor, meta, clientId, {
    action: 'service_account.secret_add',
    add: () =>
      deps.tokenService.addSecret(
        actor.tenant,
        clientId,
        input.expires_at === undefined ? {} : { expires_at: input.expires_at },
        actorLabel(actor),
      ),
    details: (added) => ({ secret: { id: added.id, expires_at: added.expires_at } }),
    undo: (added) => deps.tokenService.removeSecretById(actor.tenant, clientId, added.id),
  });
}

/** What to remove: a key, a trusted workload, one secret (by its id), or every secret. */
export type RemovedCredential =
  | { kind: 'key'; id: string }
  | { kind: 'trust'; id: string }
  | { kind: 'secret'; id?: string };

const NOT_FOUND = {
  key: 'Key not found',
  trust: 'Trust not found',
  secret: 'Secret not found',
} as const;
const IS_ID = { key: isKeyId, trust: isTrustId, secret: isSecretId } as const;

/**
 * Removes one credential; the token service revokes exactly the tokens it obtained (the
 * account's other credentials' tokens keep working). The account and the credential are read
 * first, so the audit event names them and an unknown id is a 404 before any change; the event
 * is then retried, as for every irreversible action.
 */
export async function removeServiceAccountCredential(
  deps: ServiceAccountDeps,
  actor: Actor,
  meta: RequestMeta,
  clientId: string,
  removed: RemovedCredential,
): Promise<void> {
  assertCanManage(actor);
  assertClientId(clientId);
  if (removed.id !== undefined && !IS_ID[removed.kind](removed.id))
    throw new NotFound(NOT_FOUND[removed.kind]);
  const account = await deps.tokenService.getServiceAccount(actor.tenant, clientId);
  const { tenant } = actor;
  if (removed.kind === 'secret') {
    if (removed.id === undefined) await deps.tokenService.removeSecret(tenant, clientId);
    else await deps.tokenService.removeSecretById(tenant, clientId, removed.id);
    const details = removed.id === undefined ? {} : { secret: { id: removed.id } };
    await recordIrreversible(
      deps,
      auditEvent(actor, meta, 'service_account.secret_remove', account, details),
    );
    return;
  }
  const credentials = await deps.tokenService.getCredentials(tenant, clientId);
  if (removed.kind === 'key') {
    const key = credentials.keys.find((k) => k.id === removed.id);
    await deps.tokenService.removeKey(tenant, clientId, removed.id);
    await recordIrreversible(
      deps,
      auditEvent(actor, meta, 'service_account.key_remove', account, {
        key: { id: removed.id, alg: key?.alg ?? null },
      }),
    );
    return;
  }
  const trust = credentials.trusts.find((t) => t.id === removed.id);
  await deps.tokenService.removeTrust(tenant, clientId, removed.id);
  await recordIrreversible(
    deps,
    auditEvent(actor, meta, 'service_account.trust_remove', account, {
      trust: { id: removed.id, issuer: trust?.issuer ?? null, subject: trust?.subject ?? null },
    }),
  );
}
