package dev.commplan.release;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks every relative link of the docs: in {@code README.md}, {@code CONTRIBUTING.md}, {@code CHANGELOG.md}
 * and every {@code .md} under {@code docs/}, each {@code [text](target)}, {@code ![alt](target)} and
 * {@code [id]: target} outside code must name a file or folder of the checkout, and its {@code #anchor} a
 * heading of the Markdown file it names (or an {@code <a id>} there), as GitHub makes anchors: the heading's
 * text as rendered, lower-cased, without punctuation, spaces turned into hyphens, and {@code -1}, {@code -2}
 * after repeats. A link into a file of another kind may only take GitHub's line anchors ({@code #L12},
 * {@code #L12-L20}). Web links ({@code https:}, {@code mailto:}) are not fetched.
 *
 * <p>{@link DocsLinksTest} runs it in every build. It needs nothing but the JDK, so it also runs alone, from
 * the checkout's root: {@code java release-checks/src/test/java/dev/commplan/release/DocsLinks.java}
 * prints each broken link as {@code file:line: target: why} and exits 1 if there is one.
 */
public final class DocsLinks {
  /** Where a link's target starts, after {@code ](}: up to the closing parenthesis or a title. */
  private static final Pattern INLINE = Pattern.compile("\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
  private static final Pattern REFERENCE = Pattern.compile("(?m)^ {0,3}\\[[^\\]]+\\]:\\s+<?(\\S+?)>?(?:\\s.*)?$");
  private static final Pattern CODE_SPAN = Pattern.compile("(`+)(.+?)\\1", Pattern.DOTALL);
  private static final Pattern ATX = Pattern.compile("^ {0,3}(#{1,6})(?:\\s+(.*?))?(?:\\s+#+)?\\s*$");
  private static final Pattern SETEXT = Pattern.compile("^ {0,3}(=+|-+)\\s*$");
  private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
  private static final Pattern FENCE = Pattern.compile("^\\s*(`{3,}|~{3,})");
  private static final Pattern WEB = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");
  private static final Pattern LINE_ANCHOR = Pattern.compile("L\\d+(-L\\d+)?");
  private static final Pattern NOT_IN_SLUG = Pattern.compile("[^\\w\\- ]", Pattern.UNICODE_CHARACTER_CLASS);

  /** A broken link: the file and line it is on, its target, and what is wrong with it. */
  public record Broken(String file, int line, String target, String why) {
    @Override
    public String toString() {
      return file + ":" + line + ": " + target + ": " + why;
    }
  }

  private final Path root;
  private final Map<Path, Set<String>> anchors = new HashMap<>();

  private DocsLinks(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  /** Checks the checkout's docs from its root folder; prints what is broken, and exits 1 if anything is. */
  public static void main(String[] args) {
    List<Broken> broken = check(Path.of(args.length > 0 ? args[0] : "."));
    broken.forEach(System.out::println);
    if (!broken.isEmpty()) {
      System.out.println(broken.size() + " broken link" + (broken.size() == 1 ? "" : "s"));
      System.exit(1);
    }
  }

  /**
   * {@return every broken link of the docs under {@code root}, in file and line order}
   *
   * @param root the checkout's root folder
   */
  public static List<Broken> check(Path root) {
    DocsLinks links = new DocsLinks(root);
    List<Broken> broken = new ArrayList<>();
    for (Path page : links.pages()) {
      broken.addAll(links.checkPage(page));
    }
    return broken;
  }

  /** The pages checked: the three at the root and every Markdown file under docs/, in path order. */
  private List<Path> pages() {
    Set<Path> pages = new TreeSet<>();
    for (String name : List.of("README.md", "CONTRIBUTING.md", "CHANGELOG.md")) {
      if (Files.isRegularFile(root.resolve(name))) {
        pages.add(root.resolve(name));
      }
    }
    Path docs = root.resolve("docs");
    if (Files.isDirectory(docs)) {
      try (Stream<Path> walk = Files.walk(docs)) {
        walk.filter(p -> p.toString().endsWith(".md") && Files.isRegularFile(p)).forEach(pages::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return List.copyOf(pages);
  }

  /** The broken links of one page. */
  private List<Broken> checkPage(Path page) {
    String text = withoutCode(read(page));
    List<Broken> broken = new ArrayList<>();
    String name = root.relativize(page).toString();
    for (Pattern p : List.of(INLINE, REFERENCE)) {
      Matcher m = p.matcher(text);
      while (m.find()) {
        String target = m.group(1);
        String why = problem(page, target);
        if (why != null) {
          broken.add(new Broken(name, lineOf(text, m.start()), target, why));
        }
      }
    }
    broken.sort((a, b) -> Integer.compare(a.line(), b.line()));
    return broken;
  }

  /** What is wrong with {@code target}, a link on {@code page}, or null where nothing is. */
  private String problem(Path page, String target) {
    if (target.isEmpty()) {
      return "an empty link";
    }
    if (WEB.matcher(target).find()) {
      return null;
    }
    int hash = target.indexOf('#');
    String path = hash < 0 ? target : target.substring(0, hash);
    String anchor = hash < 0 ? null : URLDecoder.decode(target.substring(hash + 1), StandardCharsets.UTF_8);
    Path file = path.isEmpty() ? page : page.getParent().resolve(URLDecoder.decode(path, StandardCharsets.UTF_8))
        .normalize();
    if (!file.startsWith(root)) {
      return "outside the checkout";
    }
    if (!Files.exists(file)) {
      return "no such file: " + root.relativize(file);
    }
    if (anchor == null) {
      return null;
    }
    if (!file.toString().endsWith(".md")) {
      return Files.isRegularFile(file) && LINE_ANCHOR.matcher(anchor).matches() ? null
          : "#" + anchor + ": a file that is not Markdown takes only a line anchor (#L12)";
    }
    Set<String> known = anchors.computeIfAbsent(file, f -> anchorsOf(read(f)));
    return known.contains(anchor) ? null : "no heading makes #" + anchor + " in " + root.relativize(file);
  }

  /**
   * {@return the anchors GitHub makes for a Markdown text: one per heading, outside fenced code, and the
   * {@code <a id>} and {@code <a name>} written in it}
   */
  static Set<String> anchorsOf(String markdown) {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    String[] lines = markdown.split("\n", -1);
    String fence = null;
    String previous = "";
    for (String line : lines) {
      if (fence != null) {
        if (closes(line, fence)) {
          fence = null;
        }
        previous = "";
        continue;
      }
      Matcher f = FENCE.matcher(line);
      if (f.find()) {
        fence = f.group(1);
        previous = "";
        continue;
      }
      String heading = null;
      Matcher atx = ATX.matcher(line);
      Matcher setext = SETEXT.matcher(line);
      if (atx.matches()) {
        heading = atx.group(2) == null ? "" : atx.group(2);
      } else if (setext.matches() && !previous.isBlank() && !ATX.matcher(previous).matches()
          && !previous.strip().startsWith("|")) {
        heading = previous.strip();
      }
      if (heading != null) {
        String slug = slug(heading);
        int n = seen.merge(slug, 1, Integer::sum) - 1;
        anchors.add(n == 0 ? slug : slug + "-" + n);
      }
      Matcher html = HTML_ANCHOR.matcher(line);
      while (html.find()) {
        anchors.add(html.group(1));
      }
      previous = heading != null ? "" : line;
    }
    return anchors;
  }

  /**
   * {@return the anchor GitHub makes for a heading written as {@code heading}}: its text as rendered (code
   * spans' text, links' text, no emphasis marks), lower-cased, with every character that is not a letter,
   * a digit, {@code _}, {@code -} or a space dropped, and each space turned into {@code -}
   */
  static String slug(String heading) {
    String text = heading.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replaceAll("<[^>]+>", "")
        .replace("`", "").replace("*", "");
    return NOT_IN_SLUG.matcher(text.strip().toLowerCase(Locale.ROOT)).replaceAll("").replace(' ', '-');
  }

  /** {@code markdown} with fenced code blocks and code spans blanked out, line breaks kept. */
  static String withoutCode(String markdown) {
    StringBuilder out = new StringBuilder();
    String fence = null;
    for (String line : markdown.split("\n", -1)) {
      if (fence != null) {
        if (closes(line, fence)) {
          fence = null;
        }
        out.append('\n');
        continue;
      }
      Matcher f = FENCE.matcher(line);
      if (f.find()) {
        fence = f.group(1);
        out.append('\n');
        continue;
      }
      out.append(line).append('\n');
    }
    Matcher span = CODE_SPAN.matcher(out);
    StringBuilder blanked = new StringBuilder();
    while (span.find()) {
      span.appendReplacement(blanked, Matcher.quoteReplacement(span.group().replaceAll("[^\n]", " ")));
    }
    span.appendTail(blanked);
    return blanked.toString();
  }

  /** Whether {@code line} closes a code block opened with {@code fence}: the same mark, at least as long, alone. */
  private static boolean closes(String line, String fence) {
    String s = line.strip();
    return s.length() >= fence.length() && s.chars().allMatch(c -> c == fence.charAt(0));
  }

  private static int lineOf(String text, int offset) {
    int line = 1;
    for (int i = 0; i < offset; i++) {
      if (text.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8).replace("\r\n", "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
