// A free TCP port on 127.0.0.1, found synchronously (Playwright evaluates its config synchronously): a child Node
// binds port 0, prints the port the kernel chose and exits. The e2e suite serves its own build there, so a server
// someone else left on a fixed port can never be the one under test.
import { execFileSync } from 'node:child_process';

const PROBE =
  "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close();});";

/** A port nothing listens on now (the kernel's choice for port 0). */
export function freePortSync(): number {
  const out = execFileSync(process.execPath, ['-e', PROBE], { encoding: 'utf8', timeout: 10_000 });
  const port = Number(out.trim());
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`free-port: got ${JSON.stringify(out)}`);
  return port;
}
