/**
 * Entry point of the web page (bundled by scripts/build-web.mjs into dist/web/): mounts
 * the app into `#app`.
 *
 * @module
 */
import { render } from "preact";
import { App } from "./app.js";
import "./style.css";

const root = document.getElementById("app");
if (root !== null) render(<App />, root);
