/**
 * One-time codes (RFC 6238) as every authenticator app computes them: HMAC-SHA-1, 6 digits, a
 * 30-second step, a code accepted one step early or late (the phone's clock may drift). Which
 * step a code matched is returned, so the caller can refuse a code whose step was already spent
 * (second-factors.ts, `totp_last_step`): within its window a code works once.
 */
import { Secret, TOTP } from 'otpauth';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted either side of the server's. */
export const TOTP_WINDOW = 1;
/** 160 bits, the HMAC-SHA-1 key size RFC 4226 recommends. */
const SECRET_BYTES = 20;

/** A new shared secret, base32 (what an app's "enter a key" field takes). */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

function totpOf(secret: string, issuer = '', label = ''): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });
}

/** The `otpauth://totp/...` URI an app imports (as a QR code or pasted). */
export function totpUri(secret: string, issuer: string, label: string): string {
  return totpOf(secret, issuer, label).toString();
}

/** A code as typed: digits only, spaces removed; undefined when it is not six digits. */
export function normalizeTotpCode(input: string): string | undefined {
  const code = input.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : undefined;
}

/** The time step the code belongs to (within the window around `now`), or undefined. */
export function matchTotp(secret: string, code: string, now = Date.now()): number | undefined {
  const delta = totpOf(secret).validate({ token: code, timestamp: now, window: TOTP_WINDOW });
  if (delta === null) return undefined;
  return Math.floor(now / 1000 / TOTP_PERIOD_SECONDS) + delta;
}
