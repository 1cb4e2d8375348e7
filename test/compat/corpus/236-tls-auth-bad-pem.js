// A tlsAuth certificate that is not PEM stops the test before it starts
// (exit 104).
export const options = { iterations: 1, tlsAuth: [{ cert: 'not a certificate', key: __ENV.CLIENT_KEY }] };

export default function () {}
