package dev.commplan.processor.generator;

import java.util.HashSet;
import java.util.Set;

/**
 * Allocates variable names in one scope: the wanted name, with {@code _} appended while it is taken or
 * reserved ({@link GeneratedTypes#RESERVED}, the generated class's name and its nested classes').
 */
final class Names {
  private final Set<String> taken;

  Names(Set<String> reserved) {
    this.taken = new HashSet<>(reserved);
  }

  String claim(String wanted) {
    String name = wanted;
    while (!taken.add(name)) {
      name += "_";
    }
    return name;
  }
}
