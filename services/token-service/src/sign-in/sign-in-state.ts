/**
 * A sign-in's progress, kept server-side in its interaction (oidc-provider's `result`, under
 * `plant`, never `login`): oidc-provider completes a sign-in only from a `login` result, which
 * is written once every step is done (next-step.ts), so resuming the authorization early only
 * starts a new sign-in.
 */
import { isPlantAction, type PlantAction } from '../second-factors/index.js';
import type { LoadedInteraction } from './interaction-kit.js';

/** A sign-in's progress, in its interaction. */
export interface SignInState {
  sub: string;
  /** The methods verified so far (RFC 8176). */
  amr: string[];
  /** A second factor (or a passkey) was verified in this sign-in. */
  factorVerified: boolean;
  step: 'factor' | 'enrol' | 'codes-shown';
  /** What the portal asked for besides signing in, until done. */
  action?: PlantAction | undefined;
  /** A pending authenticator-app secret, sealed to this interaction. */
  totpSealed?: string | undefined;
  /**
   * The person's factor generation when this sign-in first knew them: once a factor is taken
   * away (reset, removal) the sign-in is void, so a factor verified before a reset never
   * carries an enrolment after it.
   */
  factorGeneration?: number | undefined;
}

export const union = (a: readonly string[], b: readonly string[]) => [...new Set([...a, ...b])];

export function stateOf(loaded: LoadedInteraction): SignInState | undefined {
  const state = (loaded.details.result as { plant?: SignInState } | undefined)?.plant;
  return state && typeof state.sub === 'string' ? state : undefined;
}

export function actionOf(loaded: LoadedInteraction): PlantAction | undefined {
  const action = loaded.details.params.plant_action;
  return isPlantAction(action) ? action : undefined;
}

/** The seconds the interaction has left (a passkey challenge lives no longer). */
export const ttlOf = (loaded: LoadedInteraction) =>
  Math.max(1, loaded.details.exp - Math.floor(Date.now() / 1000));
