/**
 * The shape of every sign-in endpoint: a short list of named steps run in order over one
 * context (oidc-provider's `lib/actions/*` style). A step either lets the next one run or
 * answers the request itself (a page, a redirect, a refusal) and returns `ANSWERED`, which
 * ends the list. The order of a list is the order of its checks: it decides which refusal
 * wins and what a refused request has cost, so keep it.
 */
import type { Logger } from '@plant/shared/logging';
import type { Request, Response } from 'express';
import type { SignInPerson, PasskeyDeps, FactorDeps } from '../second-factors/index.js';
import type { InteractionKit, LoadedInteraction } from './interaction-kit.js';
import type { SignInState } from './sign-in-state.js';

export interface SignInStepDeps {
  factors: FactorDeps;
  passkeys: PasskeyDeps;
  logger: Logger;
}

/** What the steps share for the life of the service: the page kit and the factors. */
export interface SignInEnv {
  kit: InteractionKit;
  deps: SignInStepDeps;
}

/** Returned by a step that answered the request: the steps after it do not run. */
export const ANSWERED = Symbol('answered');
export type StepResult = typeof ANSWERED | undefined;
export type Step<C> = (ctx: C) => Promise<StepResult> | StepResult;

function unset(name: string): never {
  throw new Error(`sign-in step read ${name} before a step set it`);
}

/**
 * One request's way through its steps. What an earlier step found (the interaction, the
 * sign-in's state, the live person, the state to move to) is set on it for the later ones; a
 * step that reads what no earlier step set is a wiring mistake and throws.
 */
export class SignInContext {
  #loaded: LoadedInteraction | undefined;
  #state: SignInState | undefined;
  #person: SignInPerson | undefined;
  #next: SignInState | undefined;

  constructor(
    readonly req: Request,
    readonly res: Response,
    readonly env: SignInEnv,
  ) {}

  get kit(): InteractionKit {
    return this.env.kit;
  }
  get deps(): SignInStepDeps {
    return this.env.deps;
  }
  /** The interaction this request is for. */
  get loaded(): LoadedInteraction {
    return this.#loaded ?? unset('the interaction');
  }
  set loaded(loaded: LoadedInteraction) {
    this.#loaded = loaded;
  }
  /** The sign-in's progress as the interaction holds it (or as `advance` moves it). */
  get state(): SignInState {
    return this.#state ?? unset('the sign-in state');
  }
  set state(state: SignInState) {
    this.#state = state;
  }
  /** The state, when a sign-in is in progress (a passkey may also start one from the form). */
  get stateIfAny(): SignInState | undefined {
    return this.#state;
  }
  /** The person of the sign-in, as last read (live, at the sign-in's factor generation). */
  get person(): SignInPerson {
    return this.#person ?? unset('the person');
  }
  set person(person: SignInPerson) {
    this.#person = person;
  }
  /** The state a verified step moves the sign-in to; `advance` takes it from here. */
  get next(): SignInState {
    return this.#next ?? unset('the next state');
  }
  set next(next: SignInState) {
    this.#next = next;
  }
}

/** Steps run in order until one answers; the list is itself a step, so lists nest. */
export function flow<C>(...steps: Step<C>[]): Step<C> {
  return async (ctx: C) => {
    for (const step of steps) if ((await step(ctx)) === ANSWERED) return ANSWERED;
    return undefined;
  };
}

/** An express handler running `steps` over a new context for each request. */
export function endpoint(
  env: SignInEnv,
  ...steps: Step<SignInContext>[]
): (req: Request, res: Response) => Promise<void> {
  const run = flow(...steps);
  return async (req, res) => {
    await run(new SignInContext(req, res, env));
  };
}
