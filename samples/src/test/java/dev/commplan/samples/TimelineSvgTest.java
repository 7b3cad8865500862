package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class TimelineSvgTest {
  private static final List<StepTrace.Span> SPANS = List.of(
      new StepTrace.Span(1, StepTrace.Kind.FORWARD, "forward", 0, 2),
      new StepTrace.Span(1, StepTrace.Kind.GRADIENTS, "L1", 2, 3),
      new StepTrace.Span(1, StepTrace.Kind.COMMUNICATION, "<b&0>", 3, 7.3),
      new StepTrace.Span(0, StepTrace.Kind.FORWARD, "forward", 0.5, 2.5),
      new StepTrace.Span(0, StepTrace.Kind.UPDATE, "update", 6, 7));

  private static Document parse(String svg) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
  }

  /** The boxes of spans: the rects that carry a tooltip. */
  private static List<Element> boxes(Document svg) {
    List<Element> boxes = new ArrayList<>();
    NodeList rects = svg.getElementsByTagName("rect");
    for (int i = 0; i < rects.getLength(); i++) {
      Element rect = (Element) rects.item(i);
      if (rect.getElementsByTagName("title").getLength() == 1) {
        boxes.add(rect);
      }
    }
    return boxes;
  }

  /** The box whose tooltip starts with {@code title}. */
  private static Element box(List<Element> boxes, String title) {
    return boxes.stream().filter(b -> b.getElementsByTagName("title").item(0).getTextContent().startsWith(title))
        .findFirst().orElseThrow(() -> new AssertionError("no box " + title));
  }

  private static double attr(Element e, String name) {
    return Double.parseDouble(e.getAttribute(name));
  }

  @Test
  void everySpanIsABoxOnItsRanksLaneAtItsTime() throws Exception {
    Document svg = parse(TimelineSvg.svg("a <title>", List.of("note & more"), SPANS));
    List<Element> boxes = boxes(svg);
    assertEquals(SPANS.size(), boxes.size());
    // The axis ends at 8 ms (ticks of 1 ms over 7.3), the plot from x = 120 to 940: 102.5 px per ms.
    Element communication = box(boxes, "rank 1: all-reduce");
    assertEquals(120 + 3 * 102.5, attr(communication, "x"), 0.01);
    assertEquals(4.3 * 102.5, attr(communication, "width"), 0.01);
    assertEquals("rank 1: all-reduce <b&0>, 3.000 to 7.300 ms (4.300 ms)",
        communication.getElementsByTagName("title").item(0).getTextContent());
    // Rank 0's row comes first; in a row, the communication lane is below the compute lane.
    double rank1Compute = attr(box(boxes, "rank 1: forward"), "y");
    double rank0Compute = attr(box(boxes, "rank 0: forward"), "y");
    assertTrue(rank0Compute < rank1Compute);
    assertTrue(attr(communication, "y") > rank1Compute);
    assertEquals(rank0Compute, attr(box(boxes, "rank 0: SGD update"), "y"));
    assertEquals(rank1Compute, attr(box(boxes, "rank 1: a layer's gradients L1"), "y"));
    String text = svg.getDocumentElement().getTextContent();
    assertTrue(text.contains("a <title>") && text.contains("note & more"), text);
    assertTrue(text.contains("rank 0 compute") && text.contains("rank 1 compute"), text);
  }

  @Test
  void theLegendNamesTheKindsDrawnOnly() throws Exception {
    String text = parse(TimelineSvg.svg("t", List.of(), SPANS)).getDocumentElement().getTextContent();
    assertTrue(text.contains("forward and loss") && text.contains("all-reduce") && text.contains("SGD update"), text);
    assertTrue(!text.contains("gradient to the layer below"), text);
  }

  @Test
  void ticksAreOneTwoOrFiveTimesAPowerOfTen() {
    assertEquals(1, TimelineSvg.tick(7.3));
    assertEquals(50, TimelineSvg.tick(388));
    assertEquals(0.005, TimelineSvg.tick(0.04), 1e-12);
    assertEquals(20, TimelineSvg.tick(120));
    assertEquals(1, TimelineSvg.tick(0));
  }

  @Test
  void writeCreatesTheFolder(@TempDir Path dir) throws Exception {
    Path file = TimelineSvg.write(dir.resolve("a/b/t.svg"), "t", List.of(), SPANS);
    assertEquals(TimelineSvg.svg("t", List.of(), SPANS), Files.readString(file, StandardCharsets.UTF_8));
  }
}
