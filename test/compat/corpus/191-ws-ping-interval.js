// k6/ws: client pings and the server's pong, a server ping, setInterval
// driving sends, and a close by the server with code 4000.
// compat:args --address=
// (no REST API: the default localhost:6565 is busy whenever other runs share the machine)
import ws from 'k6/ws';
import { check } from 'k6';

export const options = { scenarios: { ping: { executor: 'shared-iterations', vus: 2, iterations: 3 } } };

export default function () {
  const url = `${__ENV.BASE.replace('http://', 'ws://')}/ws`;
  let pongs = 0, pings = 0, ticks = 0, code = 0;
  ws.connect(url, null, function (socket) {
    socket.on('open', () => {
      socket.ping();
      socket.send('ping-me');
    });
    socket.on('pong', () => { pongs++; });
    socket.on('ping', () => { pings++; });
    socket.setInterval(() => {
      // After close-me, only the server's close: a tick that fired before
      // it arrived (20 ms is short on a loaded machine) sent one message
      // more, in k6 as in metronome.
      if (ticks === 3) return;
      ticks++;
      socket.send(`tick ${ticks}`);
      if (ticks === 3) socket.send('close-me');
    }, 20);
    socket.on('close', (c) => { code = c; });
    socket.setTimeout(() => socket.close(), 5000);
  });
  check(null, {
    'one pong': () => pongs === 1,
    'one server ping': () => pings === 1,
    'three ticks': () => ticks === 3,
    'closed with 4000': () => code === 4000,
  });
}
