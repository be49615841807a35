import { createPublicKey } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request, { type Test } from 'supertest';
import { decodeJwt, TEST_ENV, uniqueIp, type Harness } from './harness.js';

/** A token request from an address of its own (so failure counters never meet). */
export function tokenRequest(h: Harness, realm: string): Test {
  return request(h.publicUrl).post(h.tokenUrl(realm)).set('x-forwarded-for', uniqueIp());
}

/** The realm's published keys (public port). */
export async function realmJwks(
  h: Harness,
  realm: string,
): Promise<Array<Record<string, unknown>>> {
  const res = await request(h.publicUrl)
    .get(`/realms/${realm}/protocol/openid-connect/certs`)
    .expect(200);
  return (res.body as { keys: Array<Record<string, unknown>> }).keys;
}

/** Verifies a Plant Store token as a resource server would, against the realm's JWKS. */
export async function verifyToken(
  h: Harness,
  token: string,
  realm: string,
): Promise<jwt.JwtPayload> {
  const { header } = decodeJwt(token);
  const key = (await realmJwks(h, realm)).find((k) => k.kid === header.kid);
  if (!key) throw new Error('kid not in the realm JWKS');
  const pem = createPublicKey({ key: key as never, format: 'jwk' });
  // The key's own algorithm, as a resource server pins it.
  return jwt.verify(token, pem, {
    algorithms: [key.alg as jwt.Algorithm],
    issuer: h.issuer(realm),
    audience: TEST_ENV.PLANT_STORE_AUDIENCE,
  }) as jwt.JwtPayload;
}
