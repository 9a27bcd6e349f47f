/**
 * Pacing of installs per integration in one worker process, learned from the provider's 429s.
 *
 * Unpaced until the first 429. A 429 pauses every worker for its Retry-After (install_not_before,
 * see install.ts), and here sets the pace to 90% of the rate at which this process completed
 * installs while it was sending since the last pause ended (over at most the last two seconds):
 * the rate the provider just refused. The other 429s of the same burst, answered before the pause,
 * change nothing. Each second without a 429 the pace rises by 1% (at least one install per
 * second), so it probes back towards the quota slowly: a pause costs a whole Retry-After of the
 * integration's throughput, so it should come rarely (multiplicative decrease, slow increase, as
 * in TCP congestion control).
 */
const WINDOW_MS = 2000;
const DECREASE = 0.9;
const INCREASE_PER_S = 0.01;
const MIN_INCREASE_PER_S = 1;
/** Installs per second never go below this, whatever the provider says. */
const MIN_RATE = 0.5;
/** A 429 after less sending than this since the last pause does not change the pace. */
const MIN_MEASURE_MS = 250;
const MIN_MEASURE_COUNT = 5;

export class InstallPacer {
  /** Installs per second; Infinity until the first 429. */
  private rate = Infinity;
  /** When the next install may start (ms since the epoch). */
  private next = 0;
  private lastIncrease = 0;
  /** The end of the pause the last 429 asked for; installs before it do not measure the sending rate. */
  private pausedUntil = 0;
  private readonly completions: number[] = [];
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** The current pace in installs per second (Infinity when unpaced). */
  get installsPerSecond(): number {
    return this.rate;
  }

  /**
   * How long the next install must wait for its turn, in ms. The turn is taken only when the wait
   * is at most `maxWaitMs`; a job that would wait longer goes back to the queue without one.
   */
  reserve(maxWaitMs = Infinity): number {
    if (!Number.isFinite(this.rate)) return 0;
    const now = this.now();
    const at = Math.max(now, this.next);
    if (at - now <= maxWaitMs) this.next = at + 1000 / this.rate;
    return at - now;
  }

  /** An install made its provider calls. */
  completed(): void {
    const now = this.now();
    this.completions.push(now);
    this.trim(now);
    if (Number.isFinite(this.rate) && now - this.lastIncrease >= 1000) {
      this.rate += Math.max(this.rate * INCREASE_PER_S, MIN_INCREASE_PER_S);
      this.lastIncrease = now;
    }
  }

  /** The provider answered 429, asking for a pause of `retryAfterMs`. */
  rateLimited(retryAfterMs: number): void {
    const now = this.now();
    if (now < this.pausedUntil) return; // another 429 of the burst this pause answers
    const since = Math.max(now - WINDOW_MS, this.pausedUntil);
    this.pausedUntil = now + retryAfterMs;
    this.lastIncrease = now;
    this.trim(now);
    // The rate over the time this process was sending: from its first completion in the window
    // (idle time before a fan-out began would otherwise read as slow sending).
    const sent = this.completions.filter((t) => t > since);
    // Too little sending to measure (another process used the quota): only the pause applies.
    if (sent.length < MIN_MEASURE_COUNT || now - sent[0]! < MIN_MEASURE_MS) return;
    const recent = ((sent.length - 1) * 1000) / (now - sent[0]!);
    this.rate = Math.max(MIN_RATE, Math.min(this.rate, recent) * DECREASE);
  }

  private trim(now: number): void {
    while (this.completions.length && this.completions[0]! <= now - WINDOW_MS) this.completions.shift();
  }
}
