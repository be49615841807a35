/**
 * plantctl as a library: the command line (`run`, `buildProgram`), the tenant file's parser and
 * the plan computation, for tools that want to plan without the CLI.
 */
export { buildProgram, run } from './program.js';
export { EXIT, CliError } from './exit-codes.js';
export {
  parseTenantFile,
  readTenantFile,
  API_VERSION,
  type TenantFile,
  type DesiredAccount,
} from './tenant-file/tenant-file.js';
export { computePlan, type Plan, type Step, type CurrentAccount } from './plan/plan.js';
export { renderPlan } from './plan/render-plan.js';
