// A threshold that does not parse is a configuration error (104).
export const options = { iterations: 1, thresholds: { http_req_duration: ['p(95) <<< 10'] } };

export default function () {}
