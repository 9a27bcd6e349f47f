/**
 * A bad configuration value: one line naming the variable and what it accepts; the CLI prints it
 * and exits 2. Apart from src/config.ts so that the CLI entry point can recognise it without
 * loading the config schema.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly variable: string;

  /** `message` replaces the default line when the value is valid but its surroundings are not. */
  constructor(variable: string, accepts: string, message?: string) {
    super(message ?? `${variable}: invalid value; expected ${accepts}`);
    this.variable = variable;
  }
}
