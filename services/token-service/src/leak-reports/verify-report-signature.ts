/**
 * Steps 1 and 3 of a leak report (secret-scanning-route.ts): the signature headers are
 * shape-checked before the body is read, and the signature (ECDSA P-256 / SHA-256 over the
 * exact body, the DER signature in base64) is verified with GitHub's published key before
 * anything is parsed.
 */
import { verify, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ServiceUnavailable } from '@plant/shared/api';
import { InvalidReportSignature, KeysUnavailable } from '../platform/index.js';
import type { SecretScanningKeys } from './secret-scanning-keys.js';

const SIGNATURE_SHAPE = /^[A-Za-z0-9+/]{40,200}={0,2}$/;
const KEY_ID_SHAPE = /^[\x21-\x7e]{1,256}$/;

/** Step 1. The headers' values, shape-checked before any work: a forged header costs nothing. */
export function signatureHeaders(headers: IncomingHttpHeaders): {
  keyId: string;
  signature: Buffer;
} {
  const keyId = headers['github-public-key-identifier'];
  const signature = headers['github-public-key-signature'];
  if (typeof keyId !== 'string' || !KEY_ID_SHAPE.test(keyId))
    throw new InvalidReportSignature('Github-Public-Key-Identifier is missing or malformed');
  if (typeof signature !== 'string' || !SIGNATURE_SHAPE.test(signature))
    throw new InvalidReportSignature('Github-Public-Key-Signature is missing or malformed');
  return { keyId, signature: Buffer.from(signature, 'base64') };
}

/** Throws `InvalidReportSignature` unless `signature` is the key's ECDSA P-256 / SHA-256 signature of `body`. */
export function assertSignedBy(key: KeyObject | undefined, body: Buffer, signature: Buffer): void {
  if (key === undefined) throw new InvalidReportSignature('the key identifier is not known');
  let valid = false;
  try {
    valid = verify('sha256', body, key, signature);
  } catch {
    valid = false;
  }
  if (!valid) throw new InvalidReportSignature();
}

/** Step 3. The raw body signed by the GitHub key its headers name; 503 while no key can be read. */
export async function verifyReportSignature(
  keys: SecretScanningKeys,
  headers: IncomingHttpHeaders,
  body: Buffer,
): Promise<void> {
  const { keyId, signature } = signatureHeaders(headers);
  const key = await keys.keyFor(keyId).catch((err: unknown) => {
    if (err instanceof KeysUnavailable)
      throw new ServiceUnavailable('The verification keys are unavailable; retry later');
    throw err;
  });
  assertSignedBy(key, body, signature);
}
