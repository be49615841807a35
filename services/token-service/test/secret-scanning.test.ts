import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  eventually,
  LeakReporter,
  leakedToken,
  pollSignals,
  type SignedLeakReport,
} from '@plant/test-kit';
import request from 'supertest';
import {
  MAX_KEYS,
  parseKeyDocument,
  SecretScanningKeys,
} from '../src/leak-reports/secret-scanning-keys.js';
import { generateClientSecret } from '../src/credentials/client-secrets.js';
import { basic, decodeJwt, startHarness, uniqueIp, type Harness } from './helpers/harness.js';
import { AUTH, internal } from './helpers/internal-client.js';

/** Two replicas on the same Postgres and Redis, both trusting the test's own "GitHub" key. */
let a: Harness;
let b: Harness;
let reporter: LeakReporter;

beforeAll(async () => {
  reporter = new LeakReporter(mkdtempSync(join(tmpdir(), 'leak-keys-')));
  const env = {
    SECRET_SCANNING_GITHUB_KEYS: reporter.documentPath,
    SECRET_SCANNING_KEYS_REFETCH_SECONDS: '1',
  };
  [a, b] = await Promise.all([startHarness(env), startHarness(env)]);
});

afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

function grant(h: Harness, tenant: string, clientId: string, secret: string) {
  return request(h.publicUrl)
    .post(h.tokenUrl(tenant))
    .set('x-forwarded-for', uniqueIp())
    .set('authorization', basic(clientId, secret))
    .type('form')
    .send({ grant_type: 'client_credentials' });
}

function post(h: Harness, report: SignedLeakReport) {
  return request(h.publicUrl).post('/secret-scanning/github').set(report.headers).send(report.body);
}

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

/** The principal's revocation entry, as a resource server's fallback lookup reads it. */
async function principalEntry(h: Harness, tenant: string, sub: string): Promise<unknown> {
  const res = await request(h.internalUrl)
    .get(`/internal/v1/realms/${tenant}/principals/${sub}`)
    .set('authorization', AUTH)
    .expect(200);
  return res.body;
}

async function securityEvents(h: Harness, sub: string) {
  return h.service
    .db('user_security_events')
    .where({ target_sub: sub })
    .orderBy('id')
    .select('action', 'actor_email', 'details');
}

describe('POST /secret-scanning/github', () => {
  test('When a live secret is reported, then it stops working on every replica, exactly its tokens are revoked, the other secret and the keys keep working, and the leak names the secret and is audited', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await internal(a)
      .addKey(tenant, account.client_id, { jwk: publicKey.export({ format: 'jwk' }) })
      .expect(201);
    const leakedId = (await internal(a).credentials(tenant, account.client_id).expect(200)).body
      .secrets[0].id as string;
    const second = await internal(a).addSecret(tenant, account.client_id).expect(201);
    // Replica B caches the credential; a token of each secret is minted before the leak.
    const before = await grant(b, tenant, account.client_id, account.secret).expect(200);
    const other = await grant(b, tenant, account.client_id, second.body.secret).expect(200);
    expect(decodeJwt(before.body.access_token as string).payload.cred).toBe(`secret:${leakedId}`);
    const url = 'https://github.com/acme/app/blob/main/.env';

    const res = await post(a, reporter.report([leakedToken(account.secret, url)]));

    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        token_hash: sha256(account.secret),
        token_type: 'plantstore_service_account_secret',
        label: 'true_positive',
      },
    ]);
    expect(JSON.stringify(res.body)).not.toContain(account.secret);
    expect((await grant(a, tenant, account.client_id, account.secret)).status).toBe(401);
    await eventually(
      async () => (await grant(b, tenant, account.client_id, account.secret)).status === 401,
      'replica B refuses the leaked secret',
    );
    // The other secret keeps working, and so do its tokens: the version did not move.
    await grant(b, tenant, account.client_id, second.body.secret).expect(200);
    const ver = decodeJwt(other.body.access_token as string).payload.ver as number;
    expect(await principalEntry(a, tenant, account.client_id)).toEqual({
      tenant,
      sub: account.client_id,
      version: ver,
      deleted: false,
      credentials: [`secret:${leakedId}`],
    });
    const credentials = await internal(a).credentials(tenant, account.client_id).expect(200);
    expect(credentials.body).toMatchObject({
      secrets: [expect.objectContaining({ id: second.body.id })],
      keys: [expect.objectContaining({ alg: 'ES256' })],
      leaks: [
        {
          url,
          source: 'content',
          reporter: 'GitHub secret scanning',
          action: 'revoked',
          secret_current: false,
          secret_id: leakedId,
        },
      ],
    });
    expect(await securityEvents(a, account.client_id)).toEqual([
      {
        action: 'service_account.secret_leak_revoked',
        actor_email: 'GitHub secret scanning',
        details: { url, source: 'content', secret_id: leakedId },
      },
    ]);
    expect(a.logs.join('\n')).not.toContain(account.secret);
    const metrics = (await request(a.managementUrl).get('/metrics')).text;
    expect(metrics).toMatch(/secret_scanning_tokens_total\{label="true_positive"[^}]*\} [1-9]/);
    expect(metrics).not.toContain(account.client_id);
  });

  test('When the same report comes again, then it is still a true positive and nothing more is recorded', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const report = reporter.report([leakedToken(account.secret)]);
    await post(a, report).expect(200);

    const again = await post(b, report);
    const twiceInOne = await post(
      a,
      reporter.report([leakedToken(account.secret), leakedToken(account.secret)]),
    );

    expect(again.body).toEqual([expect.objectContaining({ label: 'true_positive' })]);
    expect(twiceInOne.body.map((f: { label: string }) => f.label)).toEqual([
      'true_positive',
      'true_positive',
    ]);
    expect((await internal(a).credentials(tenant, account.client_id)).body.leaks).toHaveLength(1);
    expect(await securityEvents(a, account.client_id)).toHaveLength(1);
  });

  test('When a secret reset before the report arrives is reported (out of order), then it is a false positive and the new secret keeps working', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const reset = await internal(a).reset(tenant, account.client_id).expect(200);

    const res = await post(a, reporter.report([leakedToken(account.secret)]));

    expect(res.body).toEqual([expect.objectContaining({ label: 'false_positive' })]);
    await grant(a, tenant, account.client_id, reset.body.secret as string).expect(200);
    expect((await internal(a).credentials(tenant, account.client_id)).body.leaks).toEqual([]);
  });

  test("When a tenant's secret is reported, then another tenant's accounts are untouched, and a tenant that chose notify keeps its secret working with the leak shown", async () => {
    const { tenant: revoking } = await a.createTenant();
    const { tenant: notifying } = await a.createTenant();
    const leaked = await internal(a).createServiceAccount(revoking);
    const bystander = await internal(a).createServiceAccount(notifying);
    const notified = await internal(a).createServiceAccount(notifying);
    await request(a.internalUrl)
      .patch(`/internal/v1/realms/${notifying}/credential-policy`)
      .set('authorization', AUTH)
      .send({ leak_response: 'notify', actor: 'admin@example.test' })
      .expect(200);

    const res = await post(
      a,
      reporter.report([leakedToken(leaked.secret), leakedToken(notified.secret)]),
    );

    expect(res.body.map((f: { label: string }) => f.label)).toEqual([
      'true_positive',
      'true_positive',
    ]);
    await grant(a, revoking, leaked.client_id, leaked.secret).expect(401);
    await grant(a, notifying, bystander.client_id, bystander.secret).expect(200);
    await grant(a, notifying, notified.client_id, notified.secret).expect(200);
    expect((await internal(a).credentials(notifying, notified.client_id)).body).toMatchObject({
      secret: expect.objectContaining({ created_at: expect.any(String) }),
      leaks: [expect.objectContaining({ action: 'notified', secret_current: true })],
    });
    expect((await internal(a).credentials(notifying, bystander.client_id)).body.leaks).toEqual([]);
    expect(await securityEvents(a, notified.client_id)).toEqual([
      expect.objectContaining({ action: 'service_account.secret_leak_reported' }),
    ]);
  });

  test('When tokens lack our prefix or a valid checksum, then they are false positives answered without a database read', async () => {
    const real = generateClientSecret();
    const badChecksum = `${real.slice(0, -1)}${real.endsWith('0') ? '1' : '0'}`;
    const report = reporter.report([
      leakedToken('ghp_0123456789abcdefghijklmnopqrstuvwxyz'),
      leakedToken(badChecksum),
    ]);
    let queries = 0;
    const count = () => {
      queries += 1;
    };
    a.service.db.on('query', count);
    try {
      const res = await post(a, report);
      expect(res.status).toBe(200);
      expect(res.body.map((f: { label: string }) => f.label)).toEqual([
        'false_positive',
        'false_positive',
      ]);
    } finally {
      a.service.db.off('query', count);
    }
    expect(queries).toBe(0);
  });

  test('When a report is forged (another key under the id, a changed body, an unknown key id, no signature), then it is 401 and nothing happens', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const genuine = reporter.report([leakedToken(account.secret)]);
    const impostor = new LeakReporter(mkdtempSync(join(tmpdir(), 'impostor-')));
    const otherKey = impostor.report([leakedToken(account.secret)]);
    const tampered = { ...genuine, body: genuine.body.replace('content', 'commit') };

    const answers = await Promise.all([
      post(a, {
        ...otherKey,
        headers: { ...otherKey.headers, 'github-public-key-identifier': reporter.keyId },
      }),
      post(a, tampered),
      post(a, otherKey),
      request(a.publicUrl).post('/secret-scanning/github').type('json').send(genuine.body),
    ]);

    expect(answers.map((r) => r.status)).toEqual([401, 401, 401, 401]);
    for (const r of answers) expect(r.body).toEqual({ error: 401, message: expect.any(String) });
    await grant(a, tenant, account.client_id, account.secret).expect(200);
  });

  test('When the body is not JSON, then a bad signature is 401 before it is parsed, and a good one is 400', async () => {
    const forged = { ...reporter.sign('[{"token": '), body: '[{"token": ]' };
    await post(a, forged).expect(401);
    const res = await post(a, reporter.sign('[{"token": '));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message: expect.any(String) });
  });

  test('When a report is oversized or holds too many tokens, then it is refused (413, 400) and nothing is looked up', async () => {
    const big = reporter.sign(JSON.stringify([leakedToken('x'.repeat(300 * 1024))]));
    const many = reporter.report(
      Array.from({ length: 101 }, () => leakedToken(generateClientSecret())),
    );

    await post(a, big).expect(413);
    const tooMany = await post(a, many);

    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toContain('at most 100');
  });

  test('When GitHub rotates its key, then a report signed with the new key is accepted once the document is read again', async () => {
    const { tenant } = await a.createTenant();
    const account = await internal(a).createServiceAccount(tenant);
    const rotated = reporter.rotate();

    await eventually(
      async () => (await post(b, rotated.report([leakedToken(account.secret)]))).status === 200,
      'the rotated key is accepted',
    );
    await grant(b, tenant, account.client_id, account.secret).expect(401);
  });
});

describe("POST /secret-scanning/github signed as docs/walkthrough.md's leak report signs", () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    // The walkthrough's commands (docs/walkthrough.md): an EC P-256 key and its public half, in a GitHub-shaped document.
    dir = mkdtempSync(join(tmpdir(), 'openssl-keys-'));
    execFileSync('openssl', [
      'ecparam',
      '-name',
      'prime256v1',
      '-genkey',
      '-noout',
      '-out',
      join(dir, 'scanner.pem'),
    ]);
    execFileSync(
      'openssl',
      ['ec', '-in', join(dir, 'scanner.pem'), '-pubout', '-out', join(dir, 'scanner.pub.pem')],
      { stdio: 'ignore' },
    );
    writeFileSync(
      join(dir, 'github-keys.json'),
      JSON.stringify({
        public_keys: [
          {
            key_identifier: 'test-key-1',
            key: readFileSync(join(dir, 'scanner.pub.pem'), 'utf8'),
            is_current: true,
          },
        ],
      }),
    );
    h = await startHarness({ SECRET_SCANNING_GITHUB_KEYS: join(dir, 'github-keys.json') });
  });
  afterAll(async () => {
    await h.close();
  });

  test('When the report is signed with openssl dgst -sha256 -sign, then the secret is revoked', async () => {
    const { tenant } = await h.createTenant();
    const account = await internal(h).createServiceAccount(tenant);
    const body = JSON.stringify([leakedToken(account.secret)]);
    writeFileSync(join(dir, 'report.json'), body);
    const signature = execFileSync('openssl', [
      'dgst',
      '-sha256',
      '-sign',
      join(dir, 'scanner.pem'),
      join(dir, 'report.json'),
    ]).toString('base64');

    const res = await request(h.publicUrl)
      .post('/secret-scanning/github')
      .set('content-type', 'application/json')
      .set('github-public-key-identifier', 'test-key-1')
      .set('github-public-key-signature', signature)
      .send(body);

    expect(res.status).toBe(200);
    expect(res.body).toEqual([expect.objectContaining({ label: 'true_positive' })]);
    await grant(h, tenant, account.client_id, account.secret).expect(401);
  });
});

describe('POST /secret-scanning/github without SECRET_SCANNING_GITHUB_KEYS', () => {
  let off: Harness;
  beforeAll(async () => {
    off = await startHarness();
  });
  afterAll(async () => {
    await off.close();
  });

  test('When no key document is configured, then the endpoint answers 404', async () => {
    const res = await post(off, reporter.report([leakedToken(generateClientSecret())]));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 404, message: expect.any(String) });
  });
});

describe('the key document cache', () => {
  test('When unknown key ids arrive within the refetch interval, then the document is not read again; after it, a rotated key is found', async () => {
    const first = new LeakReporter(mkdtempSync(join(tmpdir(), 'leak-cache-')));
    const slow = new SecretScanningKeys({ source: first.documentPath, refetchMs: 3_600_000 });
    const eager = new SecretScanningKeys({ source: first.documentPath, refetchMs: 0 });
    expect(await slow.keyFor(first.keyId)).toBeDefined();
    expect(await eager.keyFor(first.keyId)).toBeDefined();

    const rotated = first.rotate();
    const forged = await Promise.all(
      Array.from({ length: 50 }, (_, i) => slow.keyFor(`forged-${i}`)),
    );

    expect(forged.every((key) => key === undefined)).toBe(true);
    expect(await slow.keyFor(rotated.keyId)).toBeUndefined();
    expect(await eager.keyFor(rotated.keyId)).toBeDefined();
  });

  test('When a document lists more keys than the bound, or keys that are not P-256, then only the bound of P-256 keys is kept', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const pem = (k: typeof ec) => k.export({ type: 'spki', format: 'pem' }).toString();
    const document = {
      public_keys: [
        { key_identifier: 'rsa', key: pem(rsa), is_current: true },
        { key_identifier: 'garbage', key: 'not a key', is_current: true },
        ...Array.from({ length: 40 }, (_, i) => ({ key_identifier: `ec-${i}`, key: pem(ec) })),
      ],
    };
    const keys = parseKeyDocument(JSON.stringify(document));
    expect(keys.size).toBe(MAX_KEYS - 2);
    expect(keys.has('rsa')).toBe(false);
    expect(parseKeyDocument('{"public_keys": 5}').size).toBe(0);
    expect(parseKeyDocument('not json').size).toBe(0);
  });
});

describe('A leak report and Shared Signals', () => {
  test('When a leak report revokes a secret, then a receiver of the realm gets RISC credential-compromise about that account', async () => {
    const { tenant } = await a.createTenant();
    const api = internal(a);
    const receiver = await api.createServiceAccount(tenant);
    await api.patch(tenant, receiver.client_id, { receive_signals: true }).expect(200);
    const token = (
      await request(a.publicUrl)
        .post(a.tokenUrl(tenant))
        .set('authorization', basic(receiver.client_id, receiver.secret))
        .type('form')
        .send({ grant_type: 'client_credentials', scope: 'ssf.manage ssf.read' })
        .expect(200)
    ).body.access_token as string;
    const stream = await request(a.publicUrl)
      .post(`/realms/${tenant}/ssf/streams`)
      .set('authorization', `Bearer ${token}`)
      .send({
        delivery: { method: 'urn:ietf:rfc:8936' },
        events_requested: [
          'https://schemas.openid.net/secevent/risc/event-type/credential-compromise',
        ],
      })
      .expect(201);
    const leaked = await api.createServiceAccount(tenant);

    await post(a, reporter.report([leakedToken(leaked.secret, 'https://github.com/o/r')])).expect(
      200,
    );

    const issuer = a.issuer(tenant);
    const { sets } = await pollSignals(
      stream.body.delivery.endpoint_url as string,
      token,
      { issuer, jwksUri: `${issuer}/protocol/openid-connect/certs`, audience: receiver.client_id },
      { returnImmediately: true },
    );
    expect(sets.map((s) => [s.type, s.sub_id, s.event.credential_type])).toEqual([
      [
        'https://schemas.openid.net/secevent/risc/event-type/credential-compromise',
        { format: 'iss_sub', iss: issuer, sub: leaked.client_id },
        'password',
      ],
    ]);
    expect(sets[0]!.event).toMatchObject({ initiating_entity: 'system' });
  });
});
