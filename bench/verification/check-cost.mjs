// CPU time of one signature check per key kind, as the token service makes them (node:crypto,
// a 600-byte signing input): the figures of docs/hardening.md, "Bounded verification cost".
// Run: node bench/verification/check-cost.mjs   (CPU time, so other load on the host matters less than wall time)
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { cpus } from 'node:os';

const data = Buffer.alloc(600, 0x61);
const ROUNDS = 400;

/**
 * Prints the CPU time of one check of a 600-byte input with `publicKey`.
 * @param {string} name @param {import('node:crypto').KeyObject} publicKey @param {import('node:crypto').KeyObject} privateKey
 * @param {string | null} digest @param {object} [options]
 */
function cost(name, publicKey, privateKey, digest, options = {}) {
  const signature = sign(digest, data, { key: privateKey, ...options });
  for (let i = 0; i < 20; i += 1) verify(digest, data, { key: publicKey, ...options }, signature);
  const start = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i += 1)
    verify(digest, data, { key: publicKey, ...options }, signature);
  const used = process.cpuUsage(start);
  console.log(
    `${name.padEnd(44)} ${((used.user + used.system) / ROUNDS).toFixed(0).padStart(6)} µs`,
  );
}

/**
 * The same modulus with another public exponent: the check fails, but costs the exponentiation in full.
 * @param {import('node:crypto').KeyObject} publicKey @param {Buffer} e
 */
const withExponent = (publicKey, e) =>
  createPublicKey({
    key: { ...publicKey.export({ format: 'jwk' }), e: e.toString('base64url') },
    format: 'jwk',
  });

for (const bits of [2048, 4096]) {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  cost(`RSA-${bits}, e = 65537`, publicKey, privateKey, 'sha256');
  cost(
    `RSA-${bits}, e = 2^32 - 1 (largest accepted)`,
    withExponent(publicKey, Buffer.alloc(4, 0xff)),
    privateKey,
    'sha256',
  );
}
{
  // What an upload could hold before the rule: OpenSSL bounds e to 64 bits only above 3072-bit moduli.
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 3072 });
  const e = Buffer.alloc(384, 0xff);
  e[0] = 0x7f;
  cost('RSA-3072, e of 3071 bits (refused now)', withExponent(publicKey, e), privateKey, 'sha256');
}
for (const [curve, digest] of [
  ['P-256', 'sha256'],
  ['P-384', 'sha384'],
  ['P-521', 'sha512'],
]) {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: curve });
  cost(`EC ${curve}${curve === 'P-256' ? '' : ' (refused now)'}`, publicKey, privateKey, digest, {
    dsaEncoding: 'ieee-p1363',
  });
}
{
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  cost('Ed25519', publicKey, privateKey, null);
}
console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}`);
