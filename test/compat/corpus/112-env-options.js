// K6_VUS and K6_ITERATIONS from the environment.
// compat:env K6_VUS=2 K6_ITERATIONS=6
export default function () {}
