/** "15 minutes", "40 seconds": a throttle's wait, rounded up to what a person reads. */
export function waitWording(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}
