/** The one Markdown → platform-text renderer (src/adapters/chat/text-renderer.ts), with a style made up for the test. */
import { expect, it } from "vitest";
import { createTextRenderer, quoteLines, wrapMarkers } from "../../../src/adapters/chat/index.js";

const render = createTextRenderer({
  escape: (text) => text.replace(/</gu, "‹"),
  bold: (inner) => wrapMarkers("*", inner),
  italic: (inner) => wrapMarkers("_", inner),
  strike: (inner) => wrapMarkers("~", inner),
  code: (text) => `[${text}]`,
  codeBlock: (text, lang) => `{${lang}|${text}}`,
  quote: quoteLines,
  link: (href, label, bare) => (bare ? `<${href}>` : `${label} <${href}>`),
  image: (href, alt) => `img:${alt}:${href}`,
  bullet: "+",
  indent: "  ",
  boldTableHeader: true,
  finish: (text) => text.replace(/&amp;/gu, "&"),
});

it("each marker, escape, link, image and block comes from the style; the rest is shared", () => {
  expect(render("**b** _i_ ~~s~~ `c<` a<b & c")).toBe("*b* _i_ ~s~ [c<] a‹b & c");
  expect(render("# Title\n\npara")).toBe("*Title*\n\npara");
  expect(render("```ts\nx<1\n```")).toBe("{ts|x<1}");
  expect(render("> one\n> two")).toBe("> one\n> two");
  expect(render("[docs](https://x.dev) and https://y.dev")).toBe("docs <https://x.dev> and <https://y.dev>");
  expect(render("![alt](https://x.dev/i.png)")).toBe("img:alt:https://x.dev/i.png");
  expect(render("---")).toBe("——————");
});

it("lists take the style's bullet and indent, tasks ☐/☑, numbering from the start; tables bold their header when asked; blank lines squeezed", () => {
  expect(render("- a\n- b\n  more\n\n3. c\n4. d")).toBe("+ a\n+ b\n  more\n\n3. c\n4. d");
  expect(render("- [ ] todo\n- [x] done")).toBe("+ ☐ todo\n+ ☑ done");
  expect(render("| a | b |\n|---|---|\n| 1 | 2 |")).toBe("*a | b*\n1 | 2");
  expect(render("one\n\n\n\n\ntwo")).toBe("one\n\ntwo");
});
