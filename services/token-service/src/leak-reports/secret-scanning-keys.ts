import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { KeysUnavailable } from '../platform/index.js';

/** A key document larger than this is refused (GitHub's holds a few keys: a few KiB). */
export const KEY_DOCUMENT_MAX_BYTES = 64 * 1024;
/** Keys read from one document; more are ignored (GitHub publishes a handful). */
export const MAX_KEYS = 32;
const FETCH_TIMEOUT_MS = 5_000;

export interface SecretScanningKeysOptions {
  /** A file path or an https URL. */
  source: string;
  /** A document is read again for an unknown key id at most this often. */
  refetchMs: number;
}

/**
 * The verification keys of a secret scanning partner (GitHub's public-keys document:
 * `{"public_keys": [{"key_identifier", "key" (PEM), "is_current"}]}`), by key id. Read on first
 * use and kept; an unknown key id reads the document again, at most once per `refetchMs`
 * whoever asks (one read in flight, shared), so forged ids cost no more than that. The map
 * holds at most MAX_KEYS keys: the last document read. Only EC P-256 keys are kept (the
 * signatures are ECDSA P-256 / SHA-256).
 */
export class SecretScanningKeys {
  #keys = new Map<string, KeyObject>();
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;

  constructor(private readonly options: SecretScanningKeysOptions) {}

  /** The key, or undefined when no document read within the interval names it; rejects with `KeysUnavailable` when none was ever read. */
  async keyFor(id: string): Promise<KeyObject | undefined> {
    const known = this.#keys.get(id);
    if (known !== undefined) return known;
    if (Date.now() - this.#readAt >= this.options.refetchMs) {
      this.#reading ??= this.#read().finally(() => (this.#reading = undefined));
      await this.#reading;
    } else if (this.#reading !== undefined) await this.#reading;
    if (this.#keys.size === 0) throw new KeysUnavailable('no verification key could be read');
    return this.#keys.get(id);
  }

  async #read(): Promise<void> {
    this.#readAt = Date.now();
    let text: string;
    try {
      text = await this.#load();
    } catch (err) {
      // Keys read before stay in use; without any, a report cannot be checked.
      if (this.#keys.size === 0) throw new KeysUnavailable((err as Error).message);
      return;
    }
    const keys = parseKeyDocument(text);
    if (keys.size > 0 || this.#keys.size === 0) this.#keys = keys;
  }

  async #load(): Promise<string> {
    const { source } = this.options;
    if (!source.startsWith('https://')) {
      const bytes = await readFile(source);
      if (bytes.length > KEY_DOCUMENT_MAX_BYTES) throw new Error('key document too large');
      return bytes.toString('utf8');
    }
    const answer = await fetch(source, {
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      redirect: 'error',
      headers: { accept: 'application/json' },
    });
    if (!answer.ok) throw new Error(`key document answered ${answer.status}`);
    const declared = Number(answer.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > KEY_DOCUMENT_MAX_BYTES)
      throw new Error('key document too large');
    const bytes = Buffer.from(await answer.arrayBuffer());
    if (bytes.length > KEY_DOCUMENT_MAX_BYTES) throw new Error('key document too large');
    return bytes.toString('utf8');
  }
}

/** The P-256 keys of a public-keys document by id; anything malformed is skipped. */
export function parseKeyDocument(text: string): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  let listed: unknown;
  try {
    listed = (JSON.parse(text) as { public_keys?: unknown }).public_keys;
  } catch {
    return keys;
  }
  if (!Array.isArray(listed)) return keys;
  for (const entry of listed.slice(0, MAX_KEYS)) {
    const { key_identifier: id, key: pem } = (entry ?? {}) as Record<string, unknown>;
    if (typeof id !== 'string' || id.length === 0 || id.length > 256 || typeof pem !== 'string')
      continue;
    try {
      const key = createPublicKey(pem);
      if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1')
        keys.set(id, key);
    } catch {
      // Not a public key: skipped.
    }
  }
  return keys;
}
