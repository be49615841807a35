import { Counter, type Registry } from 'prom-client';

/** Token endpoint outcomes by grant type and error code (bounded label sets). */
export class TokenMetrics {
  readonly issued: Counter<'grant_type'>;
  readonly failed: Counter<'grant_type' | 'error'>;

  constructor(registry: Registry) {
    this.issued = new Counter({ name: 'oauth_tokens_issued_total', help: 'Tokens issued by grant type', labelNames: ['grant_type'], registers: [registry] });
    this.failed = new Counter({ name: 'oauth_token_errors_total', help: 'Token endpoint errors by grant type and OAuth error code', labelNames: ['grant_type', 'error'], registers: [registry] });
  }
}

const GRANT_TYPES = new Set(['client_credentials', 'authorization_code', 'refresh_token']);

/** Unknown grant types from clients must not become new label values. */
export function grantTypeLabel(value: unknown): string {
  return typeof value === 'string' && GRANT_TYPES.has(value) ? value : 'other';
}
