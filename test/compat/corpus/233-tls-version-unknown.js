// An unknown TLS version stops the test before it starts (exit 104).
export const options = { iterations: 1, tlsVersion: { min: 'tls1.2', max: 'tls1.4' } };

export default function () {}
