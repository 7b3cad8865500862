package dev.commplan.runtime.agreement;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The plans built on one communicator, as the agreement check names them (issue 34, item 3): a plan is its
 * name and its instance, the how-manyth plan of that name built on the communicator. Builds are collective
 * and run in the same order on every rank (the fingerprint check compares each), so the k-th instance of
 * a name is the same plan on every rank, and two instances of one plan class executed in opposite orders
 * differ in their records. Written by the communicator's one thread at build, read by the synchronizing
 * thread for messages.
 */
final class PlanNames {
  private final Map<Long, String> names = new ConcurrentHashMap<>();
  private final Map<String, Integer> instances = new ConcurrentHashMap<>();
  /** Each plan name's fields by handle (the same for every instance: the fingerprint check compares them). */
  private final Map<Long, List<String>> fields = new ConcurrentHashMap<>();

  /**
   * A plan of this name was built, with {@code planFields} by handle: its key (word 2 of its records, and word
   * 1), the next instance of the name.
   */
  Agreement.PlanKey register(String planName, List<String> planFields) {
    long hash = hash(planName);
    names.put(hash, planName);
    if (!planFields.isEmpty()) {
      fields.put(hash, List.copyOf(planFields));
    }
    return new Agreement.PlanKey(hash, instances.merge(planName, 1, Integer::sum));
  }

  /** The hash that names a plan in records: FNV-1a of its name, never 0 (0 means "no plan"). */
  static long hash(String planName) {
    long hash = 0xcbf29ce484222325L;
    for (int i = 0; i < planName.length(); i++) {
      hash = (hash ^ planName.charAt(i)) * 0x100000001b3L;
    }
    return hash == 0 ? 1 : hash;
  }

  /**
   * The fields of the plan {@code hash} whose handles are the bits of {@code handles} ({@link
   * Agreement#roundClosed}): {@code [x, y]}, {@code [x, y, and fields from the 64th on]}, or the handles where
   * this rank did not build the plan.
   */
  String fields(long hash, long handles) {
    List<String> known = fields.getOrDefault(hash, List.of());
    List<String> out = new ArrayList<>();
    for (int h = 0; h < 63; h++) {
      if ((handles & 1L << h) != 0) {
        out.add(h < known.size() ? known.get(h) : "#" + h);
      }
    }
    if (handles < 0) {
      out.add("and fields from the 64th on");
    }
    return String.join(", ", out);
  }

  /**
   * {@code t.Sum}, {@code t.Sum #2} where this communicator built more than one plan of that name, or {@code
   * #1f2e... (not built on this rank)}.
   */
  String text(long hash, long instance) {
    String name = names.get(hash);
    if (name == null) {
      return "#" + Long.toHexString(hash) + " (not built on this rank)";
    }
    return instances.getOrDefault(name, 0) > 1 || instance > 1 ? name + " #" + instance : name;
  }
}
