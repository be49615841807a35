/** Every `pnpm bench` scenario, in the order a full run measures them. */
import * as tokenScenario from './token.mjs';
import * as listScenario from './list.mjs';
import * as createScenario from './create.mjs';
import * as signInScenario from './signin.mjs';
import * as signInCodeScenario from './signin-code.mjs';
import * as signInPasskeyScenario from './signin-passkey.mjs';
import * as floodScenario from './flood.mjs';
import * as keysScenario from './keys.mjs';
import * as quotaScenario from './quota.mjs';
import * as dpopScenario from './dpop.mjs';
import * as introspectScenario from './introspect.mjs';
import * as tokenEs256Scenario from './token-es256.mjs';
import * as tokenAlgScenario from './token-alg.mjs';
import * as listEs256Scenario from './list-es256.mjs';
import * as signalsScenario from './signals.mjs';
import * as pushFairScenario from './push-fair.mjs';
import * as exchangeScenario from './exchange.mjs';
import * as chainScenario from './chain.mjs';

/**
 * What a scenario's `targets`, `check` and `prepare` get.
 * @typedef {object} ScenarioContext
 * @property {import('../lib/platform.mjs').Platform} platform
 * @property {string} tenant
 * @property {{reader: {client_id: string, secret: string}, writer: {client_id: string, secret: string}}} accounts
 * @property {{reader: string, writer: string}} tokens   fresh access tokens of those accounts
 * @property {{tenant: string, accounts: ScenarioContext['accounts'], tokens: {reader: string, writer: string}}} es256   a second tenant, signing ES256, the same accounts and plants (only when one of its scenarios runs)
 * @property {{oidc: Server, oidcEs256: Server, naive: Server, oidcClient: {id: string, secret: string}}} baselines
 * @property {unknown} [prepared]   what the scenario's own `prepare` made (dpop: a bound token and its key)
 * @typedef {import('../lib/processes.mjs').ServerProcess} Server
 */

export const SCENARIOS = [
  tokenScenario,
  keysScenario,
  quotaScenario,
  listScenario,
  createScenario,
  signInScenario,
  signInCodeScenario,
  signInPasskeyScenario,
  floodScenario,
  dpopScenario,
  introspectScenario,
  exchangeScenario,
  chainScenario,
  tokenEs256Scenario,
  tokenAlgScenario,
  listEs256Scenario,
  signalsScenario,
  pushFairScenario,
];
/** The scenarios that need the ES256 tenant (seeded only when one of them runs). */
export const ES256_SCENARIOS = [tokenEs256Scenario, tokenAlgScenario, listEs256Scenario].map(
  (s) => s.name,
);
