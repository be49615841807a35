// Baseline of `pnpm bench:restart`: the least a Node process does before it serves, node's own
// start and one http listener answering 200, so a service's start is quoted against the floor
// measured in the same run. Env: PORT.
import { createServer } from 'node:http';

const server = createServer((_req, res) => res.end('ok'));
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(
    `${JSON.stringify({ msg: 'listening', port: typeof address === 'object' && address !== null ? address.port : 0 })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
