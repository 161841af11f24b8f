/** Samples the resident set size on a timer and on demand, keeping the peak. */
export interface RssSampler {
  sample(): void;
  /** Stops the timer; returns the peak RSS in bytes. */
  stop(): number;
}

export function startRssSampler(intervalMs = 50): RssSampler {
  let peak = process.memoryUsage().rss;
  const sample = (): void => {
    const rss = process.memoryUsage().rss;
    if (rss > peak) peak = rss;
  };
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    sample,
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
