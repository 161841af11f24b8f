/**
 * The nginx example (`deploy/nginx/threadline.conf` + `deploy/nginx/config.yaml`) run for
 * real: Debian's nginx on loopback ports with a self-signed certificate (made by `openssl`)
 * for the shipped name, in front of the built `threadline serve`. The checks are in
 * `proxy-checks.ts`; what is substituted in the site file is in `proxy-nginx-process.ts`.
 */
import { fileURLToPath } from "node:url";
import { describeProxyExample } from "./proxy-checks.js";
import { startNginx } from "./proxy-nginx-process.js";

describeProxyExample({
  name: "nginx",
  configFile: fileURLToPath(new URL("../../deploy/nginx/config.yaml", import.meta.url)),
  start: startNginx,
  wrongMethodStatus: 403,
  otherHostStatus: null,
  redirectStatus: 301,
  bodyLimitOnHeaders: true,
});
