/**
 * Every People change asks for a recent second factor before anything else (platform/step-up.ts):
 * a person who needs step-up and has not verified a factor in the last 10 minutes gets 401 with
 * RFC 9470's challenge, and the token service is never asked. Reads only need the role.
 */
import { describe, expect, test } from '@jest/globals';
import type { TokenServiceClient } from '@plant/shared/token-service-client';
import type { Actor } from '../src/platform/actor.js';
import { StepUpRequired } from '../src/platform/errors.js';
import {
  changePerson,
  invitePerson,
  listPeople,
  removePerson,
  revokeInvitation,
  type PeopleDeps,
} from '../src/people/people.js';

const calls: string[] = [];
/** A token service that records what was asked and answers nothing useful. */
const tokenService = new Proxy(
  {},
  {
    get: (_t, name) => async () => {
      calls.push(String(name));
      return [];
    },
  },
) as unknown as TokenServiceClient;
const deps = { tokenService, audit: {}, logger: {}, mailer: undefined } as unknown as PeopleDeps;
const meta = { requestId: null, address: null };
const admin = (factorAt?: number): Actor => ({
  tenant: 'acme',
  sub: 'admin-1',
  email: 'admin@acme.test',
  type: 'user',
  role: 'Account Admin',
  via: 'session',
  stepUpRequired: true,
  ...(factorAt === undefined ? {} : { factorAt }),
});

describe('step-up before People changes', () => {
  test.each([
    ['never verified', undefined],
    ['verified 11 minutes ago', Date.now() - 11 * 60_000],
  ])(
    'When an admin whose factor was %s invites, changes, removes or revokes, then each is StepUpRequired and the token service is not asked',
    async (_when, factorAt) => {
      calls.length = 0;
      const actor = admin(factorAt);

      const outcomes = await Promise.allSettled([
        invitePerson(deps, actor, meta, { email: 'a@b.test', role: 'View' }),
        changePerson(deps, actor, meta, 'user-1', { role: 'Edit' }),
        removePerson(deps, actor, meta, 'user-1'),
        revokeInvitation(deps, actor, meta, '00000000-0000-0000-0000-000000000000'),
      ]);

      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        const err = (outcome as PromiseRejectedResult).reason as StepUpRequired;
        expect(err).toBeInstanceOf(StepUpRequired);
        expect(err.status).toBe(401);
        expect(err.headers?.['www-authenticate']).toContain(
          'error="insufficient_user_authentication"',
        );
      }
      expect(calls).toEqual([]);
    },
  );

  test('When an admin whose factor was verified a minute ago lists people, then the token service is asked (reads need no step-up either way)', async () => {
    calls.length = 0;

    await listPeople(deps, admin(Date.now() - 60_000));
    await listPeople(deps, admin());

    expect(calls).toEqual(['listUsers', 'listUsers']);
  });
});
