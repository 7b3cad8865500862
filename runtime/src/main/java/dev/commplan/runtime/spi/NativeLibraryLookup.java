package dev.commplan.runtime.spi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * How a backend finds its native library (NCCL, the CUDA runtime, MPI), the same way for each: the value
 * of its system property when set (a path if it contains '/', else a name for the dynamic loader), else
 * its soname; then which required symbols are missing. Never throws: the {@link Found} says what was
 * tried, in words for the backend's message.
 *
 * <p>The opening itself is the backend's ({@code openPath}, {@code openName}): {@code
 * SymbolLookup.libraryLookup} is a restricted method, and each backend keeps its restricted calls in one
 * class of its own.
 */
public final class NativeLibraryLookup {
  private NativeLibraryLookup() {}

  /**
   * What {@link #find} found.
   *
   * @param lookup the opened library, or null
   * @param loadedAs how it was found ("libnccl.so.2 (by the dynamic loader)"), or null
   * @param name the path or name that was tried last (the property's value, or the soname)
   * @param tried one line per attempt that failed, with the reason
   */
  public record Found(SymbolLookup lookup, String loadedAs, String name, List<String> tried) {
    /** {@return whether the library opened} */
    public boolean isOpen() {
      return lookup != null;
    }

    /** {@return the attempts, joined for a message} */
    public String triedText() {
      return String.join("; ", tried);
    }

    /**
     * Which of {@code required} the opened library lacks (empty when all are there).
     *
     * @param required the symbols the backend needs
     * @return the missing ones, in the order given; empty when all are there
     */
    public List<String> missing(List<String> required) {
      List<String> missing = new ArrayList<>();
      for (String symbol : required) {
        if (lookup.find(symbol).isEmpty()) {
          missing.add(symbol);
        }
      }
      return missing;
    }

    /**
     * The address of {@code symbol}, or an {@link IllegalStateException} naming the library.
     *
     * @param symbol the C name
     * @return the symbol's address, as a zero-length segment
     */
    public MemorySegment symbol(String symbol) {
      Optional<MemorySegment> address = lookup.find(symbol);
      if (address.isEmpty()) {
        throw new IllegalStateException(loadedAs + " has no symbol " + symbol);
      }
      return address.get();
    }
  }

  /**
   * Opens {@code propertyValue} when it is set, else {@code soname}.
   *
   * @param soname the library's soname ({@code libnccl.so.2}), opened through the dynamic loader
   * @param property the system property's name, for messages
   * @param propertyValue the system property's value, or null when unset
   * @param openPath opens a file (may throw {@link IllegalArgumentException} or {@link IllegalCallerException})
   * @param openName opens a name through the dynamic loader (the same)
   * @return what was found, never null
   */
  public static Found find(String soname, String property, String propertyValue,
      Function<Path, SymbolLookup> openPath, Function<String, SymbolLookup> openName) {
    List<String> tried = new ArrayList<>();
    if (propertyValue == null || propertyValue.isBlank()) {
      SymbolLookup lookup = tryName(soname, "by name", openName, tried);
      return new Found(lookup, lookup == null ? null : soname + " (by the dynamic loader)", soname, tried);
    }
    String value = propertyValue.strip();
    String source = "-D" + property + "=" + value;
    if (value.indexOf('/') < 0) {
      SymbolLookup lookup = tryName(value, "from " + source, openName, tried);
      return new Found(lookup, lookup == null ? null : value + " (from " + source + ", by the dynamic loader)",
          value, tried);
    }
    Path path = Path.of(value);
    if (!Files.exists(path)) {
      tried.add(value + " (from " + source + "): no such file");
      return new Found(null, null, value, tried);
    }
    try {
      return new Found(openPath.apply(path), path.toAbsolutePath() + " (from " + source + ")", value, tried);
    } catch (IllegalArgumentException | IllegalCallerException e) {
      tried.add(value + " (from " + source + "): " + e.getMessage());
      return new Found(null, null, value, tried);
    }
  }

  private static SymbolLookup tryName(
      String name, String how, Function<String, SymbolLookup> openName, List<String> tried) {
    try {
      return openName.apply(name);
    } catch (IllegalArgumentException | IllegalCallerException e) {
      tried.add(name + " (" + how + " through the dynamic loader: LD_LIBRARY_PATH, /etc/ld.so.cache, "
          + "/lib, /usr/lib): " + e.getMessage());
      return null;
    }
  }
}
