package dev.commplan.runtime.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which path or name a backend's library is looked for under, and what a failure says, with fake openers. */
class NativeLibraryLookupTest {
  private final List<String> opened = new ArrayList<>();
  private final SymbolLookup some = name -> java.util.Optional.empty();

  private Function<String, SymbolLookup> names(boolean succeed) {
    return name -> {
      opened.add("name " + name);
      if (!succeed) {
        throw new IllegalArgumentException("Cannot open library: " + name);
      }
      return some;
    };
  }

  private Function<Path, SymbolLookup> paths(boolean succeed) {
    return path -> {
      opened.add("path " + path);
      if (!succeed) {
        throw new IllegalArgumentException("bad ELF");
      }
      return some;
    };
  }

  @Test
  void withoutThePropertyTheSonameGoesToTheDynamicLoader() {
    NativeLibraryLookup.Found found = NativeLibraryLookup.find("libx.so.1", "x.lib", "  ", paths(true), names(true));
    assertSame(some, found.lookup());
    assertEquals("libx.so.1 (by the dynamic loader)", found.loadedAs());
    assertEquals(List.of("name libx.so.1"), opened);
  }

  @Test
  void aNameInThePropertyIsTriedInsteadAndAFailureSaysWhereItCameFrom() {
    NativeLibraryLookup.Found found = NativeLibraryLookup.find("libx.so.1", "x.lib", " liby.so ", paths(true), names(false));
    assertFalse(found.isOpen());
    assertNull(found.loadedAs());
    assertEquals("liby.so", found.name());
    assertEquals(List.of("name liby.so"), opened);
    assertTrue(found.triedText().startsWith("liby.so (from -Dx.lib=liby.so through the dynamic loader"), found.triedText());
    assertTrue(found.triedText().endsWith("Cannot open library: liby.so"), found.triedText());
  }

  @Test
  void aPathIsOpenedAsAFileAndAMissingOneIsNamed(@TempDir Path dir) throws Exception {
    Path file = Files.createFile(dir.resolve("libz.so"));
    NativeLibraryLookup.Found found = NativeLibraryLookup.find("libx.so.1", "x.lib", file.toString(), paths(true), names(true));
    assertEquals(file.toAbsolutePath() + " (from -Dx.lib=" + file + ")", found.loadedAs());
    assertEquals(List.of("path " + file), opened);

    String missing = dir.resolve("none.so").toString();
    NativeLibraryLookup.Found none = NativeLibraryLookup.find("libx.so.1", "x.lib", missing, paths(true), names(true));
    assertFalse(none.isOpen());
    assertEquals(missing + " (from -Dx.lib=" + missing + "): no such file", none.triedText());

    NativeLibraryLookup.Found bad = NativeLibraryLookup.find("libx.so.1", "x.lib", file.toString(), paths(false), names(true));
    assertFalse(bad.isOpen());
    assertTrue(bad.triedText().endsWith("): bad ELF"), bad.triedText());
  }

  @Test
  void missingSymbolsAreListedAndALookupOfOneNamesTheLibrary() {
    SymbolLookup onlyA = name -> name.equals("a")
        ? java.util.Optional.of(java.lang.foreign.MemorySegment.NULL) : java.util.Optional.empty();
    NativeLibraryLookup.Found found = NativeLibraryLookup.find("libx.so.1", "x.lib", null, paths(true), n -> onlyA);
    assertEquals(List.of("b", "c"), found.missing(List.of("a", "b", "c")));
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> found.symbol("b"));
    assertEquals("libx.so.1 (by the dynamic loader) has no symbol b", e.getMessage());
  }
}
