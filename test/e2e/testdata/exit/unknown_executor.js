export const options = {
  scenarios: { s: { executor: 'constant-everything', vus: 1, duration: '1s' } },
};

export default function () {}
