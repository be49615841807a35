import {
  assertionGrantBody,
  clientAssertion,
  clientKeyPair,
  type ClientKeyPair,
  type ClientKeyType,
} from '@plant/test-kit';
import type { Test } from 'supertest';
import type { Harness } from './harness.js';
import { internal, type CreatedAccount } from './internal-client.js';
import { tokenRequest } from './token-client.js';

/** A service account with one key the test holds (its id at the token service as `kid`). */
export interface KeyedAccount {
  account: CreatedAccount;
  key: ClientKeyPair;
  kid: string;
}

/** A new account and a new key pair of `type`, its public half added through the internal API as a JWK. */
export async function keyedAccount(
  h: Harness,
  tenant: string,
  type: ClientKeyType = 'ec',
): Promise<KeyedAccount> {
  const account = await internal(h).createServiceAccount(tenant);
  const key = clientKeyPair(type);
  const added = await internal(h).addKey(tenant, account.client_id, { jwk: key.publicJwk });
  if (added.status !== 201)
    throw new Error(`add key failed: ${added.status} ${JSON.stringify(added.body)}`);
  return { account, key, kid: (added.body as { id: string }).id };
}

/** A grant with a client assertion the test signed (default: a valid one, `aud` the realm's issuer). */
export function assertionGrant(
  h: Harness,
  tenant: string,
  { account, key, kid }: KeyedAccount,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Test {
  const assertion = clientAssertion({
    clientId: account.client_id,
    audience: h.issuer(tenant),
    key,
    kid,
    claims,
    header,
  });
  return sendAssertion(h, tenant, account.client_id, assertion);
}

/** A grant carrying `assertion` as it is. */
export function sendAssertion(
  h: Harness,
  tenant: string,
  clientId: string,
  assertion: string,
  extra: Record<string, string> = {},
): Test {
  return tokenRequest(h, tenant)
    .type('form')
    .send(assertionGrantBody(clientId, assertion, extra));
}
