// A draft's SKILL.md as HTML the window may show. The text comes from a model that read an
// untrusted transcript, so it is treated as hostile: `marked` turns the Markdown into HTML, and
// DOMPurify then keeps only the tags plain Markdown makes, with no attributes that run code or
// fetch anything. Links and images are written out as text (where they point, in words): a
// click must never navigate the window, and nothing may load from the network.
//
// This is the only place the UI turns text into HTML; views pass its output to `{@html}` and
// nothing else.

import createDOMPurify, { type Config } from "dompurify";
import { Marked, type Tokens } from "marked";

/** The tags plain Markdown (GFM) produces, minus links, images and raw-HTML extras. */
const ALLOWED_TAGS = [
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code", "em", "strong", "del",
  "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "span",
];

const PURIFY: Config = {
  ALLOWED_TAGS,
  // `start` numbers an ordered list, `align` a table column; `class` marks the link and image
  // notes written below (DOMPurify drops any other attribute: `on…`, `style`, `href`, `src`).
  ALLOWED_ATTR: ["start", "align", "class"],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  KEEP_CONTENT: true,
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    link({ href, tokens }: Tokens.Link): string {
      const text = this.parser.parseInline(tokens);
      if (text.trim() === href.trim() || text.trim() === escapeHtml(href.trim())) {
        return `<span class="md-link">${text}</span>`;
      }
      return `<span class="md-link">${text}</span> <span class="md-href">(${escapeHtml(href)})</span>`;
    },
    image({ href, text }: Tokens.Image): string {
      const alt = text.trim() === "" ? "image" : `image: ${text}`;
      return `<span class="md-image">[${escapeHtml(alt)} — ${escapeHtml(href)}]</span>`;
    },
  },
});

/** The classes this module writes; any other `class` (raw HTML in the text) is dropped. */
const OWN_CLASSES = new Set(["md-link", "md-href", "md-image"]);

let purifier: ReturnType<typeof createDOMPurify> | null = null;

function purify(html: string): string {
  if (purifier === null) {
    // A private instance, so its hook touches nothing else that uses DOMPurify.
    purifier = createDOMPurify(window);
    purifier.addHook("uponSanitizeAttribute", (_node, data) => {
      if (data.attrName === "class" && !OWN_CLASSES.has(data.attrValue)) data.keepAttr = false;
    });
  }
  return purifier.sanitize(html, PURIFY) as string;
}

/** How the Markdown is drawn into the page. */
export interface RenderOptions {
  /**
   * The level a `#` heading becomes (1 to 6), lower ones following it: a text shown under the
   * page's own h4 starts at 5, so its headings do not break the page's outline.
   */
  topHeading?: number;
}

/** The Markdown as sanitized HTML: safe to pass to `{@html}`. */
export function renderMarkdown(markdown: string, { topHeading = 1 }: RenderOptions = {}): string {
  const tokens = marked.lexer(markdown);
  marked.walkTokens(tokens, (token) => {
    if (token.type === "heading") token.depth = Math.min(6, token.depth + topHeading - 1);
  });
  return purify(marked.parser(tokens));
}
