package dev.commplan.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link and anchor of the docs resolves ({@link DocsLinks}): README.md, CONTRIBUTING.md,
 * CHANGELOG.md and docs/. The other tests pin the anchor rule to anchors GitHub made for headings of these
 * pages, and show what the check reports.
 */
class DocsLinksTest {
  @Test
  void everyRelativeLinkAndAnchorOfTheDocsResolves() {
    List<DocsLinks.Broken> broken = DocsLinks.check(Checkout.root());
    if (!broken.isEmpty()) {
      fail(broken.size() + " broken link(s) in the docs (file:line: target: why):\n"
          + broken.stream().map(DocsLinks.Broken::toString).collect(Collectors.joining("\n")));
    }
  }

  /** Headings of these docs and the anchors GitHub gives them. */
  @Test
  void anchorsAreGitHubs() {
    assertEquals("commplanbadbucket--a-negative-commplanbucketbytes-or-more-sent-fields-than-enum-field-holds-rule-23",
        DocsLinks.slug("`[CommPlan/BadBucket]` — a negative `@CommPlan(bucketBytes)`, or more sent fields than"
            + " `enum Field` holds (rule 23)"));
    assertEquals("hostdevice-ordering", DocsLinks.slug("Host↔device ordering"));
    assertEquals("why-closing-a-mesh-costs-about-05-s", DocsLinks.slug("Why closing a mesh costs about 0.5 s"));
    assertEquals("overlap--the-gradients-all-reduce-overlapped-with-the-backward-pass",
        DocsLinks.slug("`overlap` — the gradients' all-reduce overlapped with the backward pass"));
    assertEquals("4-run-it-on-4-local-ranks", DocsLinks.slug("4. Run it on 4 local ranks"));
    assertEquals("see-the-guide", DocsLinks.slug("See [the guide](guide.md)"));
    assertEquals(Set.of("a", "a-1", "a-2", "b", "x"),
        DocsLinks.anchorsOf("# A\n## A\n```\n# not a heading\n```\n### A\nB\n---\n<a id=\"x\"></a>\n"));
  }

  @Test
  void whatItReports(@TempDir Path root) throws IOException {
    Files.createDirectories(root.resolve("docs/sub"));
    Files.writeString(root.resolve("README.md"), "# Top\n\nSee [a](docs/a.md#first) and [b](docs/a.md#nowhere).\n");
    Files.writeString(root.resolve("docs/a.md"), String.join("\n",
        "# First",
        "[gone](gone.md) [up](../README.md#top) [here](#first) [missing](#second)",
        "![picture](img/none.svg) [code](../src/Code.java#L3) [code anchor](../src/Code.java#main)",
        "`[not a link](nowhere.md)` and",
        "```",
        "[not a link either](nowhere.md)",
        "```",
        "[ref]: sub/b.md#x",
        "[web](https://example.com/#anything) [out](../../elsewhere.md)",
        ""));
    Files.writeString(root.resolve("docs/sub/b.md"), "Title\n=====\n");
    Files.createDirectories(root.resolve("src"));
    Files.writeString(root.resolve("src/Code.java"), "class Code {}\n");
    List<String> broken = DocsLinks.check(root).stream().map(DocsLinks.Broken::toString).toList();
    assertEquals(List.of(
        "README.md:3: docs/a.md#nowhere: no heading makes #nowhere in docs/a.md",
        "docs/a.md:2: gone.md: no such file: docs/gone.md",
        "docs/a.md:2: #second: no heading makes #second in docs/a.md",
        "docs/a.md:3: img/none.svg: no such file: docs/img/none.svg",
        "docs/a.md:3: ../src/Code.java#main: #main: a file that is not Markdown takes only a line anchor (#L12)",
        "docs/a.md:8: sub/b.md#x: no heading makes #x in docs/sub/b.md",
        "docs/a.md:9: ../../elsewhere.md: outside the checkout"), broken);
  }
}
