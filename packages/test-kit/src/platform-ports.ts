import type { ServiceName } from './service-process.js';
import { freePort } from './waiting.js';

/** Ports of each replica of each service, chosen before any starts. */
export interface PlatformPorts {
  'token-service': Array<{ port: number; internalPort: number }>;
  'plant-store': number[];
  'account-admin': number[];
}

/** Free ports for that many replicas of each service (`PlatformOptions.ports`). */
export async function platformPorts({
  tokenServices = 1,
  plantStores = 1,
  accountAdmins = 1,
}: {
  tokenServices?: number;
  plantStores?: number;
  accountAdmins?: number;
}): Promise<PlatformPorts> {
  const ports = async (n: number) => {
    const chosen: number[] = [];
    for (let i = 0; i < n; i++) chosen.push(await freePort());
    return chosen;
  };
  const [publicPorts, internalPorts] = [await ports(tokenServices), await ports(tokenServices)];
  return {
    'token-service': publicPorts.map((port, i) => ({ port, internalPort: internalPorts[i]! })),
    'plant-store': await ports(plantStores),
    'account-admin': await ports(accountAdmins),
  };
}

/** A replica's process name: the service's, then `-2`, `-3` … */
export const replicaName = (service: ServiceName, index: number) =>
  index === 0 ? service : `${service}-${index + 1}`;
