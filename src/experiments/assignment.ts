/**
 * Which arm of an experiment a unit (a sender, or a message in the add-in's per-message mode) gets.
 *
 * The choice is a pure function of the experiment's id, the unit's id and the arms' weights: the
 * SHA-256 of `experimentId:unitId` read as a number in [0, 1), placed on the arms' cumulative weights
 * in the order given. So a reinstall never reshuffles anyone, people added later are split by the same
 * weights, and no table has to remember the assignment (it is recorded for reporting, not to decide).
 * Arms must come in a stable order (their position in the experiment), with positive weights.
 */
import crypto from 'node:crypto';

export interface ArmWeight {
  id: string;
  weight: number;
}

/** The unit's point in [0, 1): the first 52 bits of the hash, so every double is exact. */
export function unitPoint(experimentId: string, unitId: string): number {
  const digest = crypto.createHash('sha256').update(`${experimentId}:${unitId}`).digest();
  const high = digest.readUInt32BE(0);
  const low = digest.readUInt32BE(4) >>> 12;
  return (high * 2 ** 20 + low) / 2 ** 52;
}

export function assignArm(experimentId: string, unitId: string, arms: readonly ArmWeight[]): string {
  if (arms.length === 0) throw new Error('an experiment has at least one arm');
  const total = arms.reduce((sum, arm) => sum + arm.weight, 0);
  if (!(total > 0) || arms.some((arm) => !(arm.weight > 0))) throw new Error('arm weights must be positive');
  const target = unitPoint(experimentId, unitId) * total;
  let upTo = 0;
  for (const arm of arms) {
    upTo += arm.weight;
    if (target < upTo) return arm.id;
  }
  return arms[arms.length - 1]!.id;
}
