/**
 * The step-up rule at the start of the credential-policy use cases: a person who needs a second
 * factor and has not verified one in the last 10 minutes is refused before anything is asked of
 * the token service (here one that cannot be reached, so any call would fail otherwise).
 */
import { describe, expect, test } from '@jest/globals';
import { createDatabase } from '@plant/shared/db';
import { createLogger } from '@plant/shared/logging';
import { TokenServiceClient } from '@plant/shared/token-service-client';
import { TEST_DATABASE_URL } from '@plant/test-kit';
import { createAuditRepository } from '../src/audit/audit-repository.js';
import { SCHEMA } from '../src/migrations/index.js';
import type { Actor } from '../src/platform/actor.js';
import { updateCredentialPolicy } from '../src/credential-policy/credential-policy.js';
import { StepUpRequired, toAdminError } from '../src/platform/errors.js';
import { updateServiceAccount } from '../src/service-accounts/managed-service-accounts.js';

const NOWHERE = 'http://127.0.0.1:9';
const meta = { requestId: null, address: null };

function deps() {
  const db = createDatabase({ connectionString: TEST_DATABASE_URL, schema: SCHEMA, poolMax: 1 });
  return {
    db,
    accounts: {
      tokenService: new TokenServiceClient({
        baseUrl: NOWHERE,
        internalToken: 'unused-internal-token-0123456789',
        timeoutMs: 500,
        mapError: toAdminError,
      }),
      audit: createAuditRepository(db),
      logger: createLogger({ name: 'step-up-test', level: 'silent' }),
    },
  };
}

const admin = (factorAgoMs: number | undefined): Actor => ({
  tenant: 'acme',
  sub: 'user-1',
  email: 'admin@acme.test',
  type: 'user',
  role: 'Account Admin',
  via: 'session',
  stepUpRequired: true,
  ...(factorAgoMs === undefined ? {} : { factorAt: Date.now() - factorAgoMs }),
});

describe('step-up before a credential-policy change', () => {
  test('When the factor is missing or older than 10 minutes, then the policy and quota changes are refused with the step-up challenge before the token service is asked', async () => {
    const { db, accounts } = deps();
    try {
      for (const actor of [admin(undefined), admin(11 * 60_000)]) {
        await expect(
          updateCredentialPolicy(accounts, actor, meta, { leak_response: 'notify' }),
        ).rejects.toBeInstanceOf(StepUpRequired);
        await expect(
          updateServiceAccount(accounts, actor, meta, 'sa-0123', { quota: null }),
        ).rejects.toBeInstanceOf(StepUpRequired);
      }
      // A recent factor passes the rule: the change then reaches for the (unreachable) token service.
      await expect(
        updateCredentialPolicy(accounts, admin(60_000), meta, { leak_response: 'notify' }),
      ).rejects.toMatchObject({ status: 503 });
    } finally {
      await db.destroy();
    }
  });
});
