export const options = {
  scenarios: { s: { executor: 'constant-vus', vus: 1, duration: 'ten seconds' } },
};

export default function () {}
