import { Counter, type Registry } from 'prom-client';
import { TOKEN_EXCHANGE_GRANT } from '../token-exchange/index.js';

const GRANT_TYPES = new Set([
  'client_credentials',
  'authorization_code',
  'refresh_token',
  TOKEN_EXCHANGE_GRANT,
]);

/** Unknown grant types from clients must not become new label values. */
export function grantTypeLabel(value: unknown): string {
  return typeof value === 'string' && GRANT_TYPES.has(value) ? value : 'other';
}

/**
 * Token endpoint outcomes by grant type and error code (bounded label sets). The issued
 * counter's children are looked up once per grant type: prom-client hashes a label object on
 * every `inc({...})`, and this runs once per token.
 */
export class TokenMetrics {
  readonly #issued: Counter<'grant_type'>;
  readonly #issuedBy = new Map<string, { inc(): void }>();
  readonly #failed: Counter<'grant_type' | 'error'>;

  constructor(registry: Registry) {
    this.#issued = new Counter({
      name: 'oauth_tokens_issued_total',
      help: 'Tokens issued by grant type',
      labelNames: ['grant_type'],
      registers: [registry],
    });
    this.#failed = new Counter({
      name: 'oauth_token_errors_total',
      help: 'Token endpoint errors by grant type and OAuth error code',
      labelNames: ['grant_type', 'error'],
      registers: [registry],
    });
  }

  issued(grantType: unknown): void {
    const label = grantTypeLabel(grantType);
    let child = this.#issuedBy.get(label);
    if (child === undefined) {
      child = this.#issued.labels(label);
      this.#issuedBy.set(label, child);
    }
    child.inc();
  }

  /** `error` is an OAuth error code; anything else is counted as 'other'. */
  failed(grantType: unknown, error: string | undefined): void {
    this.#failed.inc({
      grant_type: grantTypeLabel(grantType),
      error: /^[a-z_]{1,40}$/.test(error ?? '') ? error! : 'other',
    });
  }
}
