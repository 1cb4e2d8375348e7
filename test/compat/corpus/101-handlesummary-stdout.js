// handleSummary writing to stdout and to a file; textSummary is not
// needed. Data values used in checks-free form.
export const options = { iterations: 3 };

export default function () {}

export function handleSummary(data) {
  return {
    stdout: `iterations=${data.metrics.iterations.values.count}\n`,
    [__ENV.HS_OUT]: JSON.stringify({ iterations: data.metrics.iterations.values.count, keys: Object.keys(data).sort() }),
  };
}
