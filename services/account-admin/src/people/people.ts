/**
 * The audited administration of people and invitations, as the account admin API and the
 * People page offer it. The token service owns the people, their roles and the last-admin rule
 * (its users.ts); each use case here checks who may act (an Account Admin, with a recent second
 * factor for every change), asks the token service, and records what happened.
 *
 * As for service accounts (audit/record-audit-event.ts): a refused call writes no event; an
 * invitation, which grants access once accepted, is revoked again when its event cannot be
 * written (`recordOrUndo`); role changes, disabling, enabling and removals have revoked tokens
 * already and cannot be undone, so their event is retried and logged for replay
 * (`recordIrreversible`). Reads need the Account Admin role but no step-up: the list shows no
 * credential, and the page must open for the step-up to be offered at all.
 *
 * The invitation e-mail goes out after the invitation exists (and its event is written): a
 * failure to send leaves the invitation, whose link the admin still sees once, and the answer
 * says `email: 'failed'`.
 */
import type {
  Invitation,
  InvitationWithUrl,
  TokenServiceClient,
  User,
} from '@plant/shared/token-service-client';
import {
  type AuditRepository,
  type NewAuditEvent,
  recordIrreversible,
  recordOrUndo,
  type ManagementDeps,
} from '../audit/index.js';
import type { Mailer } from './smtp-mailer.js';
import {
  actorLabel,
  assertCanManagePeople,
  type Actor,
  type RequestMeta,
  InvitationNotFound,
  UserNotFound,
  assertRecentFactor,
} from '../platform/index.js';
import {
  isPeopleId,
  type InvitationsQuery,
  type InviteInput,
  type UpdateUserInput,
} from './people-validators.js';

export type EmailOutcome = 'sent' | 'failed' | 'not_configured';

export interface PeopleDeps {
  tokenService: TokenServiceClient;
  audit: AuditRepository;
  logger: ManagementDeps['logger'];
  onAuditWriteFailure?: () => void;
  /** Undefined when SMTP_URL is not set. */
  mailer: Mailer | undefined;
  /** Counts invitation e-mails by outcome. */
  onEmail?: (outcome: EmailOutcome) => void;
}

/** A person as the account admin API shows them: the token version and factor generation stay internal, the revision is the `ETag`. */
export type Person = Omit<
  User,
  'token_version' | 'factor_generation' | 'factor_required' | 'revision'
>;

export interface InvitationAnswer {
  invitation: InvitationWithUrl;
  email: EmailOutcome;
}

function toPerson({
  token_version: _version,
  factor_generation: _generation,
  factor_required: _required,
  revision: _revision,
  ...person
}: User): Person {
  return person;
}

function peopleEvent(
  actor: Actor,
  meta: RequestMeta,
  action: NewAuditEvent['action'],
  target: { type: 'user' | 'invitation'; id: string; name: string | null },
  details: Record<string, unknown> = {},
): NewAuditEvent {
  return {
    tenant: actor.tenant,
    actorSub: actor.sub,
    actorEmail: actor.email,
    actorType: actor.type,
    action,
    targetType: target.type,
    targetClientId: target.id,
    targetName: target.name,
    details,
    requestId: meta.requestId,
    address: meta.address,
  };
}

function assertPersonId(id: string): void {
  if (!isPeopleId(id)) throw new UserNotFound();
}

export async function listPeople(deps: PeopleDeps, actor: Actor): Promise<Person[]> {
  assertCanManagePeople(actor);
  return (await deps.tokenService.listUsers(actor.tenant)).map(toPerson);
}

/** A person as one resource: their answer and the revision that is its `ETag` (platform/etag.ts). */
export type RevisedPerson = Person & { revision: number };

const revised = (user: User): RevisedPerson => ({
  ...toPerson(user),
  revision: user.revision,
});

export async function getPerson(
  deps: PeopleDeps,
  actor: Actor,
  id: string,
): Promise<RevisedPerson> {
  assertCanManagePeople(actor);
  assertPersonId(id);
  return revised(await deps.tokenService.getUser(actor.tenant, id));
}

/** A new role or status: each its own audited action; the token service refuses the last active admin (409). */
export async function changePerson(
  deps: PeopleDeps,
  actor: Actor,
  meta: RequestMeta,
  id: string,
  input: UpdateUserInput,
): Promise<RevisedPerson> {
  assertCanManagePeople(actor);
  assertRecentFactor(actor, 'change-person');
  assertPersonId(id);
  const before = await deps.tokenService.getUser(actor.tenant, id);
  const after = await deps.tokenService.updateUser(
    actor.tenant,
    id,
    input.role === undefined ? { status: input.status! } : { role: input.role },
    actorLabel(actor),
  );
  const target = { type: 'user' as const, id, name: after.email };
  if (input.role !== undefined && before.role !== after.role)
    await recordIrreversible(
      deps,
      peopleEvent(actor, meta, 'user.role_change', target, {
        role: { from: before.role, to: after.role },
      }),
    );
  if (input.status !== undefined && before.status !== after.status)
    await recordIrreversible(
      deps,
      peopleEvent(
        actor,
        meta,
        after.status === 'disabled' ? 'user.disable' : 'user.enable',
        target,
      ),
    );
  return revised(after);
}

export async function removePerson(
  deps: PeopleDeps,
  actor: Actor,
  meta: RequestMeta,
  id: string,
): Promise<void> {
  assertCanManagePeople(actor);
  assertRecentFactor(actor, 'remove-person');
  assertPersonId(id);
  const person = await deps.tokenService.getUser(actor.tenant, id);
  await deps.tokenService.removeUser(actor.tenant, id, actorLabel(actor));
  await recordIrreversible(
    deps,
    peopleEvent(
      actor,
      meta,
      'user.remove',
      { type: 'user', id, name: person.email },
      {
        role: person.role,
      },
    ),
  );
}

/** One page of the pending invitations, newest first, and the cursor of the next one (absent on the last). */
export interface InvitationListPage {
  invitations: Invitation[];
  nextCursor?: string;
}

export async function listInvitations(
  deps: PeopleDeps,
  actor: Actor,
  page: InvitationsQuery,
): Promise<InvitationListPage> {
  assertCanManagePeople(actor);
  const { invitations, next_cursor } = await deps.tokenService.listInvitations(actor.tenant, page);
  return { invitations, ...(next_cursor === null ? {} : { nextCursor: next_cursor }) };
}

/** The invitation and its link (shown once), and whether it was e-mailed. */
export async function invitePerson(
  deps: PeopleDeps,
  actor: Actor,
  meta: RequestMeta,
  input: InviteInput,
): Promise<InvitationAnswer> {
  assertCanManagePeople(actor);
  assertRecentFactor(actor, 'invite');
  const invitation = await deps.tokenService.createInvitation(
    actor.tenant,
    { email: input.email, role: input.role },
    actorLabel(actor),
  );
  await recordOrUndo(
    deps as ManagementDeps,
    peopleEvent(
      actor,
      meta,
      'user.invite',
      { type: 'invitation', id: invitation.id, name: invitation.email },
      { role: invitation.role, expires_at: invitation.expires_at },
    ),
    () => deps.tokenService.revokeInvitation(actor.tenant, invitation.id),
  );
  const email = await mailInvitation(deps, actor, invitation);
  deps.onEmail?.(email);
  return { invitation, email };
}

async function mailInvitation(
  deps: PeopleDeps,
  actor: Actor,
  invitation: InvitationWithUrl,
): Promise<EmailOutcome> {
  if (deps.mailer === undefined) return 'not_configured';
  try {
    await deps.mailer.send(invitationMail(actor, invitation));
    return 'sent';
  } catch (err) {
    // Never the link: it is the invitation's credential.
    deps.logger.warn(
      {
        tenant: actor.tenant,
        invitation_id: invitation.id,
        err: { message: (err as Error)?.message },
      },
      'invitation e-mail could not be sent; the admin copies the link',
    );
    return 'failed';
  }
}

/** The message: who invited whom to which tenant, the link, and until when it works. */
export function invitationMail(actor: Actor, invitation: InvitationWithUrl) {
  const inviter = actor.email ?? 'An Account Admin';
  return {
    to: invitation.email,
    subject: `You are invited to the Plant Store tenant ${actor.tenant}`,
    text: [
      `${inviter} invited you to the Plant Store tenant "${actor.tenant}" with the role ${invitation.role}.`,
      '',
      'Set your password here (the link works once):',
      invitation.url,
      '',
      `The link expires at ${invitation.expires_at}. If you did not expect this invitation, ignore this message.`,
    ].join('\n'),
  };
}

export async function revokeInvitation(
  deps: PeopleDeps,
  actor: Actor,
  meta: RequestMeta,
  id: string,
): Promise<void> {
  assertCanManagePeople(actor);
  assertRecentFactor(actor, 'revoke-invitation');
  if (!isPeopleId(id)) throw new InvitationNotFound();
  // The token service answers the invitation it revoked (404 when none is pending): no list is read.
  const revoked = await deps.tokenService.revokeInvitation(actor.tenant, id);
  await recordIrreversible(
    deps,
    peopleEvent(actor, meta, 'invitation.revoke', {
      type: 'invitation',
      id,
      name: revoked?.email ?? null,
    }),
  );
}
