import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";

function dom(html: string): HTMLElement {
  const root = document.createElement("div");
  root.innerHTML = html;
  return root;
}

describe("renderMarkdown", () => {
  it("renders plain Markdown", () => {
    const root = dom(renderMarkdown("# Title\n\n1. **one**\n2. `two`\n"));
    expect(root.querySelector("h1")?.textContent).toBe("Title");
    expect(root.querySelectorAll("ol li")).toHaveLength(2);
    expect(root.querySelector("strong")?.textContent).toBe("one");
    expect(root.querySelector("code")?.textContent).toBe("two");
  });

  it("starts its headings at the level asked for, never below h6", () => {
    const root = dom(renderMarkdown("# Title\n\n## Part\n\n### Detail\n\n> # Quoted\n", { topHeading: 5 }));
    expect(Array.from(root.querySelectorAll("h1, h2, h3, h4, h5, h6")).map((heading) => `${heading.tagName} ${heading.textContent}`)).toEqual([
      "H5 Title",
      "H6 Part",
      "H6 Detail",
      "H5 Quoted",
    ]);
  });

  it("drops scripts, event handlers, styles and frames", () => {
    const html = renderMarkdown(
      '<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n<p style="color:red" onclick="alert(3)">hi</p>\n\n<iframe src="https://example.net"></iframe>\n',
    );
    const root = dom(html);
    expect(root.querySelector("script, img, iframe, [style], [onclick], [onerror]")).toBeNull();
    expect(html).not.toMatch(/alert|onerror|onclick/);
    expect(root.textContent).toContain("hi");
  });

  it("writes links and images out as text, never as something to click or load", () => {
    const root = dom(renderMarkdown("See [the docs](https://example.net/x) and ![a cat](https://example.net/cat.png).\n\n<a href=\"javascript:alert(1)\">raw</a>\n"));
    expect(root.querySelector("a, img")).toBeNull();
    expect(root.textContent).toContain("the docs (https://example.net/x)");
    expect(root.textContent).toContain("[image: a cat — https://example.net/cat.png]");
    expect(root.textContent).toContain("raw");
    expect(root.innerHTML).not.toContain("javascript:");
  });

  it("keeps only its own classes", () => {
    const root = dom(renderMarkdown('<span class="danger md-link">x</span> [y](https://example.net)'));
    expect(root.querySelector(".danger")).toBeNull();
    expect(root.querySelector(".md-link")?.textContent).toBe("y");
  });
});
