package dev.commplan.processor;

import static com.google.common.truth.Truth.assertWithMessage;

import dev.commplan.processor.diag.Message;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/dsl.md's "Diagnostics" lists every id the processor prints, each under its own heading with an
 * example, and nothing else: an id added to {@link Message} without its entry (or an entry left behind)
 * fails here.
 */
class DiagnosticsCatalogueTest {
  private static final Pattern HEADING = Pattern.compile("^### `\\[CommPlan/(\\w+)]`", Pattern.MULTILINE);

  @Test
  void everyMessageIdHasItsEntryInDocsDsl() throws IOException {
    // Tests run in the processor module's directory.
    String docs = Files.readString(Path.of("../docs/dsl.md"), StandardCharsets.UTF_8);
    int start = docs.indexOf("\n## Diagnostics");
    int end = docs.indexOf("\n## ", start + 1);
    String section = docs.substring(start, end);
    Set<String> documented = new TreeSet<>();
    Matcher m = HEADING.matcher(section);
    while (m.find()) {
      documented.add(m.group(1));
    }
    Set<String> printed = new TreeSet<>();
    for (Message message : Message.values()) {
      printed.add(message.id());
    }
    assertWithMessage("ids with a heading in docs/dsl.md's Diagnostics").that(documented).isEqualTo(printed);
    List<String> withoutExample = new ArrayList<>();
    for (String id : printed) {
      int at = section.indexOf("### `[CommPlan/" + id + "]`");
      int next = section.indexOf("\n### ", at + 1);
      String entry = section.substring(at, next < 0 ? section.length() : next);
      if (!entry.substring(entry.indexOf('\n')).contains("[CommPlan/" + id + "]")) {
        withoutExample.add(id);
      }
    }
    assertWithMessage("entries without an example message").that(withoutExample).isEmpty();
  }
}
