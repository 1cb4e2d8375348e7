// gRPC's connect() takes a client certificate, its key (encrypted ones
// with a password) and authorities to trust in its tls param, as k6
// v2.2.0 does; mistakes in them throw k6's errors before dialling, and
// without the authority the server's certificate fails verification.
import grpc from 'k6/net/grpc';
import { check } from 'k6';

export const options = { iterations: 1 };

const client = new grpc.Client();
client.load(['../../../internal/testkit/grpctest/testdata'], 'hello.proto');

function attempt(name, tls) {
  let err = '';
  try {
    client.connect(__ENV.MTLS.replace('https://', ''), { tls, timeout: '1500ms' });
    const r = client.invoke('metronome.test.Greeter/SayHello', { name });
    check(r, { [`${name}: the call answers`]: (v) => v.message.message === `hello ${name}` });
    client.close();
  } catch (e) {
    err = String(e);
  }
  return err;
}

export default function () {
  const { CA_PEM: ca, CLIENT_CERT: cert, CLIENT_KEY: key, CLIENT_KEY_ENC: enc } = __ENV;
  attempt('cacerts as a string', { cacerts: ca, cert, key });
  attempt('cacerts as an array, an encrypted key', { cacerts: [ca], cert, key: enc, password: 'secret' });
  attempt('an empty password', { cacerts: ca, cert, key, password: '' });
  const errors = {
    'a wrong password': attempt('x', { cacerts: ca, cert, key: enc, password: 'wrong' }),
    'no password': attempt('x', { cacerts: ca, cert, key: enc }),
    'a password for a plain key': attempt('x', { cacerts: ca, cert, key, password: 'secret' }),
    'a bad authority': attempt('x', { cacerts: [ca, 'not PEM'], cert, key }),
    'a bad certificate': attempt('x', { cacerts: ca, cert: 'not PEM', key }),
    'no authority': attempt('x', { cert, key }),
  };
  for (const [what, err] of Object.entries(errors)) {
    const text = err.replace(/^.*?(x509: |failed to append|tls: )/, '$1').replace(/"$/, '');
    check(null, { [`${what}: ${text}`]: () => err !== '' });
  }
}
