// A handleSummary that throws: k6 logs it and falls back; the run's exit
// code is kept.
export const options = { iterations: 1 };

export default function () {}

export function handleSummary() {
  throw new Error('summary failed on purpose');
}
