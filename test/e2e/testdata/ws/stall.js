// One WebSocket session per arrival: open, send one message, wait for its
// echo, close. Run by TestWebSocketStallOpenModel against a server that
// holds its echoes during a known stall.
import ws from "k6/ws";

export const options = {
	scenarios: {
		open: {
			executor: "constant-arrival-rate",
			rate: Number(__ENV.RATE),
			timeUnit: "1s",
			duration: __ENV.DURATION,
			preAllocatedVUs: Number(__ENV.VUS),
		},
	},
};

export default function () {
	ws.connect(__ENV.URL, (socket) => {
		socket.on("open", () => socket.send("x"));
		socket.on("message", () => socket.close());
	});
}
