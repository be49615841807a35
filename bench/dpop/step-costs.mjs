// The ES256 verification of a proof alone (process CPU per call): in place, and on the thread
// pool with 10 in flight, for bench/dpop/auth-cost.mjs.
import { createPublicKey, verify } from 'node:crypto';

/**
 * @param {import('@plant/test-kit').DpopKey} key
 * @param {number} count
 */
export async function stepCosts(key, count) {
  const proof = key.proof({ htm: 'GET', htu: 'https://plants.bench.example/plants', token: 'x' });
  const [header, payload, signature] = proof.split('.');
  const data = Buffer.from(`${header}.${payload}`);
  const sig = Buffer.from(/** @type {string} */ (signature), 'base64url');
  const publicKey = createPublicKey({ key: key.jwk, format: 'jwk' });
  const options = { key: publicKey, dsaEncoding: /** @type {const} */ ('ieee-p1363') };
  let cpu = process.cpuUsage();
  for (let i = 0; i < count; i += 1) verify('sha256', data, options, sig);
  let used = process.cpuUsage(cpu);
  const inPlaceUs = (used.user + used.system) / count;
  cpu = process.cpuUsage();
  await new Promise((resolve) => {
    let started = 0;
    let done = 0;
    const go = () => {
      started += 1;
      verify('sha256', data, options, sig, () => {
        done += 1;
        if (done === count) resolve(undefined);
        else if (started < count) go();
      });
    };
    for (let i = 0; i < 10; i += 1) go();
  });
  used = process.cpuUsage(cpu);
  return {
    es256VerifyInPlaceUs: inPlaceUs,
    es256VerifyOnPoolUs: (used.user + used.system) / count,
  };
}
