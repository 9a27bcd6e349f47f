import { expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

/** The ConfigError that loading `env` throws (fails the test when it throws none or another error). */
export function configError(env: Record<string, string>): ConfigError {
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  return caught as ConfigError;
}
