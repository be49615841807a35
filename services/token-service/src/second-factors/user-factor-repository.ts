/**
 * A person's second factors and the realm's factor policy, as the one repository the use cases
 * and the other wings are handed: the person as a sign-in reads them (here), and the modules by
 * what they store: totp-repository.ts, passkey-repository.ts, factor-removal-repository.ts,
 * factor-policy-repository.ts; what each change writes with it is factor-change-repository.ts.
 */
import type { Knex } from '@plant/shared/db';
import type { UserRole } from '@plant/shared/token-service-client';
import { insertSignInEvent, type SignInEvent } from '../people-audit/index.js';
import {
  createFactorPolicyRepository,
  type FactorPolicyRepository,
} from './factor-policy-repository.js';
import {
  createFactorRemovalRepository,
  type FactorRemovalRepository,
} from './factor-removal-repository.js';
import { createPasskeyRepository, type PasskeyRepository } from './passkey-repository.js';
import { createTotpRepository, type TotpRepository } from './totp-repository.js';

/** A person as a sign-in needs them: who, whether they may sign in, what they hold, what the realm requires. */
export interface SignInPerson {
  sub: string;
  email: string;
  role: UserRole;
  disabled: boolean;
  requireAdminFactor: boolean;
  passkeys: number;
  totp: boolean;
  recoveryCodesLeft: number;
  /** Moved each time a factor is taken away (removed, reset): a sign-in begun before it is void. */
  factorGeneration: number;
}

/** A factor as a list shows it (never its secret or key). */
export interface FactorView {
  id: string;
  kind: 'passkey' | 'totp';
  label: string;
  created_at: Date;
  last_used_at: Date | null;
}

export interface UserFactorRepository
  extends TotpRepository,
    PasskeyRepository,
    FactorRemovalRepository,
    FactorPolicyRepository {
  /** The live person (a deleted principal is not one), with the realm's policy and the factors held. */
  person(realm: string, sub: string): Promise<SignInPerson | undefined>;
  list(realm: string, sub: string): Promise<FactorView[]>;
  /** The person's last sign-in and its entry in the people trail, in one transaction. */
  recordSignIn(event: SignInEvent): Promise<void>;
}

/**
 * Second factors and the realm policy. Every change that a person's trail should show writes
 * its `user_security_events` row in the same transaction: the trail cannot miss a change nor
 * name one that was rolled back. The factors of a person are always read with the person's
 * realm in the condition, so an id from another realm finds nothing.
 */
export function createUserFactorRepository(db: Knex): UserFactorRepository {
  return {
    async person(realm, sub) {
      const row = await db('users as u')
        .join('principals as p', 'p.sub', 'u.sub')
        .join('realms as r', 'r.name', 'u.realm')
        .whereNull('p.deleted_at')
        .where({ 'u.realm': realm, 'u.sub': sub })
        .first(
          'u.sub',
          'u.email',
          'u.role',
          db.raw('u.disabled_at is not null as disabled'),
          'r.require_admin_factor',
          'u.factor_generation',
          db.raw(
            "(select count(*)::int from user_factors f where f.sub = u.sub and f.realm = u.realm and f.kind = 'passkey') as passkeys",
          ),
          db.raw(
            "exists (select 1 from user_factors f where f.sub = u.sub and f.realm = u.realm and f.kind = 'totp') as totp",
          ),
          db.raw(
            '(select count(*)::int from user_recovery_codes c where c.sub = u.sub and c.used_at is null) as recovery_codes_left',
          ),
        );
      if (!row) return undefined;
      return {
        sub: row.sub,
        email: row.email,
        role: row.role,
        disabled: row.disabled,
        requireAdminFactor: row.require_admin_factor,
        passkeys: row.passkeys,
        totp: row.totp,
        recoveryCodesLeft: row.recovery_codes_left,
        factorGeneration: Number(row.factor_generation),
      };
    },
    async list(realm, sub) {
      return db('user_factors')
        .where({ realm, sub })
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
        .select('id', 'kind', 'label', 'created_at', 'last_used_at');
    },
    async recordSignIn(event) {
      await db.transaction(async (trx) => {
        await trx('users')
          .where({ realm: event.realm, sub: event.sub })
          .update({ last_sign_in_at: trx.fn.now() });
        await insertSignInEvent(trx, event);
      });
    },
    ...createTotpRepository(db),
    ...createPasskeyRepository(db),
    ...createFactorRemovalRepository(db),
    ...createFactorPolicyRepository(db),
  };
}
