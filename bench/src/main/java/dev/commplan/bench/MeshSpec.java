package dev.commplan.bench;

import dev.commplan.bench.Args.UsageException;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Mesh;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A mesh given on the command line, {@code --mesh dp=2,tp=4} (axes outermost first, as {@link
 * Mesh.Builder#axis} takes them), or {@code 2x4} in {@code mesh-cost}'s list (axes named {@code dp, tp};
 * three are {@code pp, dp, tp}). Checked when parsed, before any work, by {@link Mesh.Builder#axis} itself
 * (so that the rules on names and sizes stay in one place); {@link #build} makes the mesh on a world and
 * turns a backend's refusal to split into {@link SplitRefused}.
 */
record MeshSpec(List<String> names, List<Integer> sizes) {
  MeshSpec {
    names = List.copyOf(names);
    sizes = List.copyOf(sizes);
  }

  /** {@code dp=2,tp=4}; {@code option} names where it came from, for the message. */
  static MeshSpec parse(String option, String text) {
    List<String> names = new ArrayList<>();
    List<Integer> sizes = new ArrayList<>();
    for (String part : text.split(",", -1)) {
      int eq = part.indexOf('=');
      if (eq < 0) {
        throw new UsageException(option + " " + text + ": '" + part.trim() + "' is not NAME=SIZE; write the axes"
            + " outermost first, e.g. " + option + " dp=2,tp=4");
      }
      names.add(part.substring(0, eq).trim());
      sizes.add(size(option, text, part.substring(eq + 1).trim()));
    }
    return checked(option, text, names, sizes);
  }

  /** {@code 2x4} or {@code 2x2x2}: sizes only, axes named {@link #defaultNames}. */
  static MeshSpec parseShape(String option, String text) {
    String[] parts = text.trim().split("x", -1);
    List<Integer> sizes = new ArrayList<>();
    for (String part : parts) {
      sizes.add(size(option, text, part.trim()));
    }
    return checked(option, text, defaultNames(sizes.size()), sizes);
  }

  /** One axis {@code tp}; two {@code dp, tp}; three {@code pp, dp, tp} (Megatron's order); more {@code a0, a1, ...}. */
  static List<String> defaultNames(int axes) {
    return switch (axes) {
      case 1 -> List.of("tp");
      case 2 -> List.of("dp", "tp");
      case 3 -> List.of("pp", "dp", "tp");
      default -> {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < axes; i++) {
          names.add("a" + i);
        }
        yield names;
      }
    };
  }

  private static int size(String option, String text, String size) {
    try {
      return Integer.parseInt(size);
    } catch (NumberFormatException e) {
      throw new UsageException(option + " " + text + ": the size '" + size + "' is not a whole number");
    }
  }

  /** Runs {@link Mesh.Builder#axis}'s checks on a stand-in world: no backend, no work. */
  private static MeshSpec checked(String option, String text, List<String> names, List<Integer> sizes) {
    long product = 1;
    for (int s : sizes) {
      product = s > 0 ? Math.min(product * s, 1L << 31) : product; // capped below 2^62: no overflow
    }
    if (product > Integer.MAX_VALUE) {
      throw new UsageException(option + " " + text + ": the sizes multiply to " + product + " ranks, too many");
    }
    Mesh.Builder builder = Mesh.builder(standInWorld((int) product));
    try {
      for (int i = 0; i < names.size(); i++) {
        builder.axis(names.get(i), sizes.get(i));
      }
    } catch (IllegalArgumentException e) {
      throw new UsageException(option + " " + text + ": " + e.getMessage());
    }
    return new MeshSpec(names, sizes);
  }

  /**
   * A communicator that only knows its size: what {@link Mesh.Builder#axis} reads (for its message). Any
   * other call is a mistake here and says so.
   */
  private static Communicator standInWorld(int size) {
    return (Communicator) Proxy.newProxyInstance(MeshSpec.class.getClassLoader(), new Class<?>[] {Communicator.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "size" -> size;
          case "toString" -> "the stand-in world of " + size + " ranks that --mesh is checked on";
          default -> throw new UnsupportedOperationException("the stand-in world that --mesh is checked on has no "
              + method.getName() + "()");
        });
  }

  /** The ranks of the world: the product of the sizes. */
  int ranks() {
    int product = 1;
    for (int s : sizes) {
      product *= s;
    }
    return product;
  }

  /** The size of axis {@code axis}. */
  int size(String axis) {
    return sizes.get(names.indexOf(axis));
  }

  /** {@code [dp=2, tp=4]}, as {@link Mesh} and its groups' labels write it. */
  String describe() {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < names.size(); i++) {
      s.append(i == 0 ? "" : ", ").append(names.get(i)).append('=').append(sizes.get(i));
    }
    return s.append(']').toString();
  }

  /** {@code dp=2,tp=4}: the command line's form (and the CSV's). */
  String option() {
    return describe().substring(1, describe().length() - 1).replace(", ", ",");
  }

  /** {@code 2x4}. */
  String shape() {
    return String.join("x", sizes.stream().map(String::valueOf).toList());
  }

  /**
   * {@code --over}'s axes: each an axis of this mesh, each once. {@code one}: exactly one (sweep's).
   */
  List<String> over(String text, boolean one) {
    List<String> axes = new ArrayList<>();
    for (String part : text.split(",", -1)) {
      String axis = part.trim();
      if (!names.contains(axis)) {
        throw new UsageException("--over " + text + ": '" + axis + "' is not an axis of --mesh " + option()
            + "; its axes are " + String.join(", ", names));
      }
      if (axes.contains(axis)) {
        throw new UsageException("--over " + text + ": axis '" + axis + "' is named twice");
      }
      axes.add(axis);
    }
    if (one && axes.size() != 1) {
      throw new UsageException("--over " + text + ": sweep runs over one axis of the mesh (one of "
          + String.join(", ", names) + ")");
    }
    return axes;
  }

  /**
   * The mesh on {@code world} (collective: every rank of the world calls it): {@link Mesh.Builder#build()},
   * the agreement check and one split per axis.
   *
   * @throws SplitRefused where the backend cannot split (not built yet, or too old a library), with its words
   */
  Mesh build(Communicator world) {
    Mesh.Builder builder = Mesh.builder(world);
    for (int i = 0; i < names.size(); i++) {
      builder.axis(names.get(i), sizes.get(i));
    }
    try {
      return builder.build();
    } catch (UnsupportedOperationException | BackendUnavailableException e) {
      throw new SplitRefused(world.backendName(), describe(), e);
    }
  }

  /**
   * The index of this rank's group along {@code axis} among the mesh's groups along it: its coordinates on
   * the other axes, row-major. Inputs of a checked run depend on it, so that a rank in the wrong group shows.
   */
  static int groupIndex(Mesh mesh, String axis) {
    int index = 0;
    for (String name : mesh.axisNames()) {
      if (!name.equals(axis)) {
        index = index * mesh.size(name) + mesh.coordinate(name);
      }
    }
    return index;
  }

  /**
   * Checks what the bench relies on: the axis's communicator is this rank's group, ranked by its coordinate.
   */
  static Communicator axisGroup(Mesh mesh, String axis) {
    Communicator group = mesh.axis(axis);
    if (group.size() != mesh.size(axis) || group.rank() != mesh.coordinate(axis)) {
      throw new CommPlanException(String.format(Locale.ROOT, "mesh %s, axis %s on world rank %d: the group has %d"
              + " ranks and this rank is %d there, but the axis has size %d and this rank's coordinate is %d",
          mesh, axis, mesh.world().rank(), group.size(), group.rank(), mesh.size(axis), mesh.coordinate(axis)));
    }
    return group;
  }

  /** A backend that cannot split: what the bench prints (one line) instead of a stack of causes. */
  static final class SplitRefused extends CommPlanException {
    private static final long serialVersionUID = 1L;

    SplitRefused(String backend, String mesh, RuntimeException why) {
      super("the " + backend + " backend refuses Communicator.split, so it cannot build mesh " + mesh + ": "
          + why.getMessage(), why);
    }

    /** The same refusal again, by its message (a command that went on to other meshes first). */
    SplitRefused(String message) {
      super(message);
    }
  }
}
