import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One token of a GitHub secret scanning partner report. */
export interface LeakReportToken {
  token: string;
  type: string;
  url: string;
  source: string;
}

/** A signed report as GitHub sends it: the exact body and the two headers. */
export interface SignedLeakReport {
  body: string;
  headers: {
    'content-type': 'application/json';
    'github-public-key-identifier': string;
    'github-public-key-signature': string;
  };
}

/**
 * A stand-in for GitHub secret scanning: its own P-256 key, published in a public-keys document
 * shaped like GitHub's (`{"public_keys": [{key_identifier, key, is_current}]}`) written to
 * `documentPath` (the token service's SECRET_SCANNING_GITHUB_KEYS), and reports signed with it
 * (ECDSA P-256 / SHA-256 over the body, DER signature in base64), as GitHub signs them.
 */
export class LeakReporter {
  readonly keyId: string;
  readonly documentPath: string;
  readonly #privateKey: KeyObject;
  readonly #published: Array<{ key_identifier: string; key: string; is_current: boolean }>;

  /** A new key published in a new document in `directory` (or, given `document`, added to that one: a rotation). */
  constructor(
    directory: string,
    document?: { path: string; published: LeakReporter['published'] },
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = privateKey;
    this.keyId = randomBytes(32).toString('hex');
    this.documentPath =
      document?.path ?? join(directory, `github-keys-${this.keyId.slice(0, 8)}.json`);
    this.#published = document?.published ?? [];
    this.#published.push({
      key_identifier: this.keyId,
      key: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      is_current: true,
    });
    writeFileSync(this.documentPath, JSON.stringify({ public_keys: this.#published }));
  }

  /** The document's entries (shared with a rotated reporter). */
  get published() {
    return this.#published;
  }

  /** Publishes another key in the same document (a rotation); the new reporter signs with it. */
  rotate(): LeakReporter {
    return new LeakReporter('', { path: this.documentPath, published: this.#published });
  }

  /** The report of `tokens`, signed. */
  report(tokens: LeakReportToken[]): SignedLeakReport {
    return this.sign(JSON.stringify(tokens));
  }

  /** Any body, signed (forgeries start from one). */
  sign(body: string): SignedLeakReport {
    return signWith(this.#privateKey, this.keyId, body);
  }
}

function signWith(privateKey: KeyObject, keyId: string, body: string): SignedLeakReport {
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'github-public-key-identifier': keyId,
      'github-public-key-signature': sign('sha256', Buffer.from(body), privateKey).toString(
        'base64',
      ),
    },
  };
}

/** A token as GitHub would report one of ours. */
export function leakedToken(
  token: string,
  url = 'https://github.com/example/repo/blob/main/.env',
): LeakReportToken {
  return { token, type: 'plantstore_service_account_secret', url, source: 'content' };
}
