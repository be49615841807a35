import { describe, expect, test } from '@jest/globals';
import { restorePayload, scrubPayload } from '../src/oidc/payload-scrubbing.js';
import { PayloadHoldsItsId } from '../src/platform/errors.js';

const uid = 'Jx3kQ9v_Lm2Pq8Rs4Tu6W';
const sessionId = 'Zs8Yt7Xu6Wv5Vw4Ux3Ty2';

describe('scrubbing oidc-provider payloads of bearer values', () => {
  test('When an Interaction is stored, then its id, the id in its returnTo and the session cookie are gone, and finding it by id gives oidc-provider the payload it wrote', () => {
    const payload = {
      jti: uid,
      kind: 'Interaction',
      returnTo: `https://auth.test/realms/t/protocol/openid-connect/auth/${uid}`,
      session: { accountId: 'user-1', uid: 'session-uid', cookie: sessionId },
      params: { client_id: 'portal', state: 'abc' },
      exp: 1,
    };

    const stored = scrubPayload('Interaction', uid, payload);
    const restored = restorePayload(uid, JSON.parse(JSON.stringify(stored)));

    expect(JSON.stringify(stored)).not.toContain(uid);
    expect(JSON.stringify(stored)).not.toContain(sessionId);
    expect(restored).toEqual({ ...payload, session: { accountId: 'user-1', uid: 'session-uid' } });
  });

  test('When a Session is stored, then its id is gone and its uid stays; found by uid it comes back without an id', () => {
    const payload = {
      jti: sessionId,
      kind: 'Session',
      uid: 'session-uid',
      accountId: 'user-1',
      authorizations: { portal: { sid: 's', grantId: 'g' } },
    };

    const stored = scrubPayload('Session', sessionId, payload);

    expect(stored).toEqual({
      kind: 'Session',
      uid: 'session-uid',
      accountId: 'user-1',
      authorizations: { portal: { sid: 's', grantId: 'g' } },
    });
    expect(restorePayload(sessionId, stored)).toEqual(payload);
    expect(restorePayload(undefined, stored)).toEqual(stored);
  });

  test('When a payload holds its own id in a field not known to be scrubbed, then storing it is refused', () => {
    expect(() =>
      scrubPayload('AuthorizationCode', uid, {
        jti: uid,
        kind: 'AuthorizationCode',
        echo: { of: `x${uid}` },
      }),
    ).toThrow(PayloadHoldsItsId);
  });
});
