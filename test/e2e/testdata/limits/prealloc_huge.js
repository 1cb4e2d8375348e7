// 10^7 pre-allocated VUs: under k6's cap of 10^8, over this machine's memory.
export const options = {
  scenarios: { s: { executor: 'constant-arrival-rate', rate: 1, duration: '10s', preAllocatedVUs: 1e7 } },
};
export default function () { console.log('DEFAULT-RAN'); }
