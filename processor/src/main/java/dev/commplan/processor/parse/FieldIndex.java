package dev.commplan.processor.parse;

import dev.commplan.processor.lang.Identifiers;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A plan's fields by name, for {@code into}: the field spelled so, else the first declared that is the
 * same name to the compiler ({@code into = "all\u005Cu200B"} names {@code all}; {@link
 * Identifiers#canonical}). Built once per plan, so that looking up every collective's {@code into} stays
 * linear in the number of fields.
 */
public final class FieldIndex {
  private final Map<String, ParsedField> exact = new HashMap<>();
  private final Map<String, ParsedField> canonical = new HashMap<>();

  public FieldIndex(List<ParsedField> fields) {
    for (ParsedField f : fields) {
      exact.putIfAbsent(f.name(), f);
      canonical.putIfAbsent(Identifiers.canonical(f.name()), f);
    }
  }

  /** The field {@code name} names, if any. */
  public Optional<ParsedField> find(String name) {
    ParsedField f = exact.get(name);
    return Optional.ofNullable(f != null ? f : canonical.get(Identifiers.canonical(name)));
  }
}
