// Baseline for the list and create scenarios: what a competent but naive implementation
// looks like. express 5, one pg Pool, jsonwebtoken.verify against a public key parsed once at
// start, the same SQL on a table of the same shape (schema bench_baseline), no logging, no
// metrics, no validation beyond what the query needs.
//
// Env: PORT (0), DATABASE_URL, JWKS_URL (the realm's JWKS; its first key verifies tokens),
// ISSUER, AUDIENCE, BASELINE_TENANT (the rows it serves), DATABASE_POOL_MAX (10).
import { createPublicKey } from 'node:crypto';
import express from 'express';
import jwt from 'jsonwebtoken';
import pg from 'pg';

const env = process.env;
const pool = new pg.Pool({
  connectionString: env.DATABASE_URL,
  max: Number(env.DATABASE_POOL_MAX ?? 10),
  application_name: 'bench-baseline',
});
const jwks = /** @type {{ keys: import('node:crypto').JsonWebKey[] }} */ (
  await (await fetch(/** @type {string} */ (env.JWKS_URL))).json()
);
const publicKey = createPublicKey({ key: jwks.keys[0], format: 'jwk' });
const verifyOptions = {
  algorithms: /** @type {import('jsonwebtoken').Algorithm[]} */ (['RS256']),
  issuer: env.ISSUER,
  audience: env.AUDIENCE,
};
const tenant = env.BASELINE_TENANT;

const app = express();
app.disable('x-powered-by');

app.get('/plants', async (req, res) => {
  const header = req.headers.authorization ?? '';
  let claims;
  try {
    claims = jwt.verify(header.slice(7), publicKey, verifyOptions);
  } catch {
    res.status(401).json({ error: 401, message: 'Unauthorized' });
    return;
  }
  const limit = Number(req.query.limit ?? 100);
  const { rows } = await pool.query(
    'select id, name, tag from bench_baseline.plants where tenant = $1 order by id asc limit $2',
    [tenant ?? /** @type {any} */ (claims).tenant, limit + 1],
  );
  res.json(rows.slice(0, limit).map((r) => ({ name: r.name, tag: r.tag })));
});

app.post('/plants', express.json(), async (req, res) => {
  const { id, name, tag } = req.body;
  try {
    await pool.query(
      'insert into bench_baseline.plants (tenant, id, name, tag) values ($1, $2, $3, $4)',
      [tenant, id, name, tag ?? null],
    );
  } catch (err) {
    if (/** @type {any} */ (err).code === '23505') {
      res.status(409).json({ error: 409, message: 'duplicate id' });
      return;
    }
    throw err;
  }
  res.json({ name, tag });
});

const server = app.listen(Number(env.PORT ?? 0), '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: address.port })}\n`);
});
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
