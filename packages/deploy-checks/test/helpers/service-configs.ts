// The services' own config shapes, straight from their sources: what a deployment must set
// is computed from them, never copied.
import type { ConfigShape } from '@plant/shared/config';
import { configShape as accountAdmin } from '../../../../services/account-admin/src/config.js';
import { configShape as plantStore } from '../../../../services/plant-store/src/config.js';
import { configShape as tokenService } from '../../../../services/token-service/src/config.js';
import { configRequirements, type ConfigRequirements } from '../../src/config-requirements.js';
import type { ServiceName } from '../../src/repo-paths.js';

export const CONFIG_SHAPES: Record<ServiceName, ConfigShape> = {
  'plant-store': plantStore,
  'token-service': tokenService,
  'account-admin': accountAdmin,
};

export const requirementsOf = (service: ServiceName): ConfigRequirements =>
  configRequirements(CONFIG_SHAPES[service]);
