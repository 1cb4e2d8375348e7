// A tlsAuth key that does not decrypt with its password stops the test
// before it starts (exit 104).
export const options = { iterations: 1, tlsAuth: [{ cert: __ENV.CLIENT_CERT, key: __ENV.CLIENT_KEY_ENC, password: 'wrong' }] };

export default function () {}
