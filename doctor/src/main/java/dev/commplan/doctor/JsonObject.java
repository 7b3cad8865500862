package dev.commplan.doctor;

import java.util.List;
import java.util.Map;

/**
 * A JSON object read by {@link Json}, with typed access that names the member's path in its complaints
 * ({@code groups[0].operations[3].state}): the format's rules are checked where values are taken, so a bad
 * file gets one precise line. Every member the format lists must be present; {@code null} says "does not
 * apply" or "not known". Members the format does not list are ignored (a later writer may add some).
 */
final class JsonObject {
  private final Map<String, Object> members;
  private final String path;
  private final String file;

  private JsonObject(Map<String, Object> members, String path, String file) {
    this.members = members;
    this.path = path;
    this.file = file;
  }

  /** The file's top-level value, which must be an object. */
  static JsonObject root(Object value, String file) throws BadInputException {
    if (!(value instanceof Map<?, ?>)) {
      throw new BadInputException(file + ": not a CommPlan flight record (the file holds " + kind(value)
          + ", not an object)");
    }
    return new JsonObject(cast(value), "", file);
  }

  String path() {
    return path;
  }

  BadInputException problem(String member, String what) {
    return new BadInputException(file + ": " + at(member) + " " + what);
  }

  /** The member's value as {@link Json} read it, or null where absent. */
  Object raw(String member) {
    return members.get(member);
  }

  boolean has(String member) {
    return members.containsKey(member);
  }

  private Object required(String member) throws BadInputException {
    if (!members.containsKey(member)) {
      throw new BadInputException(file + ": " + (path.isEmpty() ? "the record" : path) + " has no \"" + member
          + "\"");
    }
    return members.get(member);
  }

  String string(String member) throws BadInputException {
    Object v = required(member);
    if (!(v instanceof String s)) {
      throw problem(member, "is " + kind(v) + ", not a string");
    }
    return s;
  }

  String nonEmptyString(String member) throws BadInputException {
    String s = string(member);
    if (s.isBlank()) {
      throw problem(member, "is empty");
    }
    return s;
  }

  String stringOrNull(String member) throws BadInputException {
    Object v = required(member);
    if (v != null && !(v instanceof String)) {
      throw problem(member, "is " + kind(v) + ", not a string or null");
    }
    return (String) v;
  }

  long integer(String member) throws BadInputException {
    Object v = required(member);
    if (!(v instanceof Long l)) {
      throw problem(member, "is " + kind(v) + ", not an integer");
    }
    return l;
  }

  Long integerOrNull(String member) throws BadInputException {
    Object v = required(member);
    if (v != null && !(v instanceof Long)) {
      throw problem(member, "is " + kind(v) + ", not an integer or null");
    }
    return (Long) v;
  }

  /** An integer in {@code [min, max]}. */
  long integer(String member, long min, long max) throws BadInputException {
    long v = integer(member);
    checkRange(member, v, min, max);
    return v;
  }

  void checkRange(String member, long v, long min, long max) throws BadInputException {
    if (v < min || v > max) {
      throw problem(member, "is " + v + ", outside " + (max == Long.MAX_VALUE ? "[" + min + ", ...)"
          : "[" + min + ", " + max + "]"));
    }
  }

  JsonObject object(String member) throws BadInputException {
    Object v = required(member);
    if (!(v instanceof Map<?, ?>)) {
      throw problem(member, "is " + kind(v) + ", not an object");
    }
    return new JsonObject(cast(v), at(member), file);
  }

  List<Object> array(String member) throws BadInputException {
    Object v = required(member);
    if (!(v instanceof List<?> list)) {
      throw problem(member, "is " + kind(v) + ", not an array");
    }
    @SuppressWarnings("unchecked")
    List<Object> items = (List<Object>) list;
    return items;
  }

  /** Element {@code i} of the array {@code member}, which must be an object. */
  JsonObject element(String member, List<Object> items, int i) throws BadInputException {
    Object v = items.get(i);
    String where = at(member) + "[" + i + "]";
    if (!(v instanceof Map<?, ?>)) {
      throw new BadInputException(file + ": " + where + " is " + kind(v) + ", not an object");
    }
    return new JsonObject(cast(v), where, file);
  }

  /** The array {@code member} of strings. */
  List<String> strings(String member) throws BadInputException {
    List<Object> items = array(member);
    for (int i = 0; i < items.size(); i++) {
      if (!(items.get(i) instanceof String)) {
        throw new BadInputException(file + ": " + at(member) + "[" + i + "] is " + kind(items.get(i))
            + ", not a string");
      }
    }
    return items.stream().map(String.class::cast).toList();
  }

  /** The array {@code member} of integers. */
  List<Long> integers(String member) throws BadInputException {
    List<Object> items = array(member);
    for (int i = 0; i < items.size(); i++) {
      if (!(items.get(i) instanceof Long)) {
        throw new BadInputException(file + ": " + at(member) + "[" + i + "] is " + kind(items.get(i))
            + ", not an integer");
      }
    }
    return items.stream().map(Long.class::cast).toList();
  }

  private String at(String member) {
    return path.isEmpty() ? member : path + "." + member;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> cast(Object map) {
    return (Map<String, Object>) map;
  }

  /** How a complaint names a value's JSON type. */
  static String kind(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof String s) {
      return "the string " + Words.quote(s);
    }
    if (v instanceof Long || v instanceof Double) {
      return "the number " + v;
    }
    if (v instanceof Boolean b) {
      return b.toString();
    }
    if (v instanceof List<?>) {
      return "an array";
    }
    return "an object";
  }
}
