// 10^12 VUs: more than any machine holds.
export const options = { vus: 1e12, duration: '10s' };
export default function () { console.log('DEFAULT-RAN'); }
