package dev.commplan.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The page: well-formed, self-contained, one timeline row per rank of each group, late ranks flagged. */
class HtmlReportTest {
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"fine", "stuck", "late", "orders"})
  void wellFormedSelfContainedAndOneRowPerRank(String fixture) throws Exception {
    Diagnosis d = Fixtures.diagnosis(fixture);
    String page = HtmlReport.render(d);
    Document doc = parse(page);
    assertEquals("html", doc.getDocumentElement().getTagName());
    String lower = page.toLowerCase(Locale.ROOT);
    for (String outside : List.of("<script", "src=", "href=", "@import", "url(", "<link", "@font-face")) {
      assertFalse(lower.contains(outside), fixture + ": the page has " + outside);
    }
    List<Element> timelines = byClass(doc, "svg", "timeline");
    assertEquals(d.groups().size(), timelines.size(), "a timeline per group");
    for (int g = 0; g < timelines.size(); g++) {
      List<Element> rows = byClass(timelines.get(g), "g", "row");
      AlignedGroup group = d.groups().get(g).group;
      assertEquals(group.size(), rows.size(), group.label());
      for (int m = 0; m < rows.size(); m++) {
        assertEquals(String.valueOf(group.worldRanks().get(m)), rows.get(m).getAttribute("data-rank"));
        int cells = rows.get(m).getElementsByTagName("title").getLength();
        assertEquals(group.last() - group.first() + 1, cells, group.label() + ", rank " + group.worldRanks().get(m)
            + ": a cell per operation");
      }
    }
    for (String problem : d.problems()) {
      assertTrue(page.contains("<li>" + HtmlReport.esc(problem) + "</li>"), problem);
    }
  }

  @Test
  void aLateRankIsNamedInRedWithItsLatenessAndBars() throws Exception {
    Document doc = parse(HtmlReport.render(Fixtures.diagnosis("late")));
    List<Element> rows = byClass(doc, "g", "row");
    for (Element row : rows) {
      Element label = (Element) row.getElementsByTagName("text").item(0);
      boolean rank2 = row.getAttribute("data-rank").equals("2");
      assertEquals(rank2 ? "rank 2 LATE 50.1 ms" : "rank " + row.getAttribute("data-rank"), label.getTextContent());
      assertEquals(rank2, label.hasAttribute("fill") && label.getAttribute("font-weight").equals("bold"));
      assertEquals(rank2 ? 12 : 0, byClass(row, "rect", "late").size(), "a bar at each of its 12 collectives");
    }
  }

  @Test
  void theStalledAndTheDifferingOperationsAreMarked() throws Exception {
    String stuck = HtmlReport.render(Fixtures.diagnosis("stuck"));
    assertTrue(stuck.contains(">rank 3 never entered #9</text>"), stuck);
    assertTrue(stuck.contains("<title>#9, rank 3: never entered</title>"), stuck);
    assertTrue(stuck.contains(">stalled</text>"), stuck);
    String orders = HtmlReport.render(Fixtures.diagnosis("orders"));
    assertTrue(orders.contains(">differs</text>"), orders);
  }

  @Test
  void valuesFromTheFilesAreEscaped(@TempDir Path tmp) throws Exception {
    Path fine = Fixtures.dir("fine");
    for (int r = 0; r < 4; r++) {
      Files.writeString(tmp.resolve("rank-" + r + ".json"), Files.readString(fine.resolve("rank-" + r + ".json"))
          .replace("\"fixture-fine\"", "\"<b>&'job'\"").replace("axis tp of mesh", "<script>alert(1)</script>"));
    }
    String page = HtmlReport.render(Diagnosis.of(RecordFolder.read(tmp), 10_000_000));
    parse(page);
    assertFalse(page.contains("<script"), page);
    assertTrue(page.contains("&lt;b&gt;&amp;&#39;job&#39;"), page);
  }

  private static Document parse(String page) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", false);
    f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
    return f.newDocumentBuilder().parse(new ByteArrayInputStream(page.getBytes(StandardCharsets.UTF_8)));
  }

  private static List<Element> byClass(Document doc, String tag, String cls) {
    return byClass(doc.getDocumentElement(), tag, cls);
  }

  private static List<Element> byClass(Element root, String tag, String cls) {
    NodeList nodes = root.getElementsByTagName(tag);
    List<Element> found = new ArrayList<>();
    for (int i = 0; i < nodes.getLength(); i++) {
      Element e = (Element) nodes.item(i);
      if (List.of(e.getAttribute("class").split(" ")).contains(cls)) {
        found.add(e);
      }
    }
    return found;
  }
}
