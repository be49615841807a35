// DPoP proofs for the load generator: signed before a window starts (a pool for its expected
// requests), so the client's signing does not compete with the server for the 2 cores while
// it is measured; if a window outruns the pool, the rest are signed as they go.
import { createHash, createPrivateKey } from 'node:crypto';
import { signJws } from '@plant/test-kit';

/**
 * @typedef {{alg: 'ES256' | 'EdDSA', privateJwk: import('node:crypto').JsonWebKey, htm: string, htu: string, token: string}} ProofSpec
 */

/**
 * @param {ProofSpec} spec
 * @returns {{fill(count: number): void, next(): string}}
 */
export function proofSource(spec) {
  const privateKey = createPrivateKey({ key: spec.privateJwk, format: 'jwk' });
  const jwk =
    spec.alg === 'ES256'
      ? { kty: 'EC', crv: 'P-256', x: spec.privateJwk.x, y: spec.privateJwk.y }
      : { kty: 'OKP', crv: 'Ed25519', x: spec.privateJwk.x };
  const header = { typ: 'dpop+jwt', alg: spec.alg, jwk };
  const ath = createHash('sha256').update(spec.token).digest('base64url');
  const prefix = `${process.pid}-${Date.now()}-`;
  let counter = 0;
  const sign = () => {
    counter += 1;
    return signJws(
      header,
      {
        jti: `${prefix}${counter}`,
        htm: spec.htm,
        htu: spec.htu,
        iat: Math.floor(Date.now() / 1000),
        ath,
      },
      privateKey,
    );
  };
  /** @type {string[]} */
  let pool = [];
  return {
    fill(count) {
      pool = Array.from({ length: count }, sign);
    },
    next() {
      return pool.pop() ?? sign();
    },
  };
}
