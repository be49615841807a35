/**
 * The shapes of the three oidc-provider helpers a registered grant needs and its public API does
 * not hand it (oidc-provider-internals.ts, `grantHelpersOf`): its built-in grants receive them
 * bound, a grant registered with `registerGrantType` does not. The package has no `exports`
 * map, so these paths resolve; test/oidc-provider-internals.test.ts checks them on each upgrade.
 */
declare module 'oidc-provider/lib/helpers/validate_dpop.js' {
  export default function validateDpop(
    provider: unknown,
    ctx: unknown,
    accessToken?: string,
  ): Promise<{ thumbprint: string; jti: string } | undefined>;
}
declare module 'oidc-provider/lib/helpers/sender_constraints.js' {
  export function checkDpopRequired(provider: unknown, ctx: unknown, dPoP: unknown): void;
}
declare module 'oidc-provider/lib/helpers/grant_common.js' {
  export function applyDpopBinding(
    provider: unknown,
    ctx: unknown,
    dPoP: unknown,
    token: unknown,
  ): Promise<void>;
}
