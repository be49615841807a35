/**
 * From the portal URL a person knows to the realm plantctl signs in at. The portal tells the
 * realm's issuer, plantctl's client id and the API's audience
 * (`GET {portal}/.well-known/plantctl-configuration?tenant=<t>`, public, account-admin's), and
 * the realm's own discovery document (RFC 8414) the endpoints.
 */
import { CliError, EXIT } from '../exit-codes.js';
import { TENANT_NAME } from './profile-store.js';

export interface PlantctlConfiguration {
  issuer: string;
  client_id: string;
  audience: string;
  api: string;
}

export interface RealmMetadata {
  issuer: string;
  token_endpoint: string;
  authorization_endpoint: string;
  device_authorization_endpoint?: string;
  revocation_endpoint?: string;
  dpop_signing_alg_values_supported?: string[];
}

export async function discoverPortal(
  portal: string,
  tenant: string,
): Promise<PlantctlConfiguration> {
  if (!TENANT_NAME.test(tenant))
    throw new CliError(`Not a tenant name: ${JSON.stringify(tenant)}`, EXIT.usage);
  let base: URL;
  try {
    base = new URL(portal);
  } catch {
    throw new CliError(`--portal must be a URL, such as https://portal.example.com`, EXIT.usage);
  }
  const url = new URL('/.well-known/plantctl-configuration', base);
  url.searchParams.set('tenant', tenant);
  const body = await getJson<PlantctlConfiguration>(url.href, 'the portal');
  for (const field of ['issuer', 'client_id', 'audience', 'api'] as const)
    if (typeof body[field] !== 'string')
      throw new CliError(`The portal's configuration at ${url.href} has no ${field}`);
  return body;
}

export async function discoverRealm(issuer: string): Promise<RealmMetadata> {
  const metadata = await getJson<RealmMetadata>(
    `${issuer}/.well-known/openid-configuration`,
    'the realm',
  );
  if (metadata.issuer !== issuer)
    throw new CliError(`The realm's discovery document names another issuer: ${metadata.issuer}`);
  return metadata;
}

async function getJson<T>(url: string, what: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' } });
  } catch (error) {
    throw new CliError(`Cannot reach ${what} at ${url}: ${(error as Error).message}`);
  }
  if (res.status === 404)
    throw new CliError(`${url}: not found (is the tenant right?)`, EXIT.notFound);
  if (!res.ok) throw new CliError(`${url}: ${res.status}`);
  return (await res.json()) as T;
}
