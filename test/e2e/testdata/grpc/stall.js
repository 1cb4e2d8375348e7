// metronome's open model against a gRPC method that stalls: RATE
// arrivals/s for DURATION on up to VUS VUs, each calling Greeter/Stall of
// the test server at ADDR, whose .proto is in the folder PROTOS.
import grpc from 'k6/net/grpc';

const client = new grpc.Client();
client.load([__ENV.PROTOS], 'hello.proto');
let connected = false;

export const options = {
  scenarios: {
    open: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RATE),
      timeUnit: '1s',
      duration: __ENV.DURATION,
      preAllocatedVUs: Number(__ENV.VUS),
      maxVUs: Number(__ENV.VUS),
      gracefulStop: '5s',
    },
  },
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
};

export default function () {
  if (!connected) {
    client.connect(__ENV.ADDR, { plaintext: true, timeout: '5s' });
    connected = true;
  }
  const res = client.invoke('metronome.test.Greeter/Stall', { name: 'x' }, { timeout: '10s' });
  if (res.status !== grpc.StatusOK) {
    throw new Error('status ' + res.status);
  }
}
