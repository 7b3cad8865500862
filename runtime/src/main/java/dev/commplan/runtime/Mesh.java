package dev.commplan.runtime;

import dev.commplan.runtime.guard.Failures;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The world's ranks laid out over named axes, row-major (the last axis varies fastest, as in PyTorch's
 * {@code init_device_mesh} and JAX's meshes), with one communicator per axis: the group of ranks that
 * differ from this one only along that axis. A tensor-, pipeline- and data-parallel job is a mesh such as
 *
 * <pre>{@code
 * try (Mesh mesh = Mesh.builder(world).axis("pp", 2).axis("dp", 2).axis("tp", 2).build()) {
 *   // rank = (pp * 2 + dp) * 2 + tp
 *   mesh.axis("tp").allReduce(...);        // the 2 ranks of this rank's tensor-parallel group
 * }
 * }</pre>
 *
 * <p>{@link Builder#build()} is collective over the world: every rank builds the same mesh (axes, sizes and
 * order are compared first, through the world's agreement check ({@link AgreementChecked}), and ranks that
 * disagree fail, every one, with a {@link DisagreementException} naming the differing ranks and each mesh,
 * before anything is split), then one {@link Communicator#split} per axis is made. A mesh is used by its rank's thread, as
 * its communicators are; {@link #close()} closes the communicators it made, not the world, in the same
 * order on every rank (where a backend compares a group's last calls at its close, every rank meets there).
 */
public final class Mesh implements AutoCloseable {
  private final Communicator world;
  private final List<String> names;
  private final int[] sizes;
  private final int[] coordinates;
  private final int[] strides;
  private final String description;
  private final Communicator[] axisGroups;
  /** Groups along two or more axes, made on first use ({@link #axes}), by the axes as asked, in that order. */
  private final Map<List<String>, Communicator> multiAxisGroups = new LinkedHashMap<>();
  private boolean closed;

  private Mesh(Communicator world, List<String> names, int[] sizes) {
    this.world = world;
    this.names = List.copyOf(names);
    this.sizes = sizes.clone();
    this.strides = new int[sizes.length];
    this.coordinates = new int[sizes.length];
    int stride = 1;
    for (int i = sizes.length - 1; i >= 0; i--) {
      strides[i] = stride;
      coordinates[i] = (world.rank() / stride) % sizes[i];
      stride *= sizes[i];
    }
    this.description = describe(names, sizes);
    this.axisGroups = new Communicator[sizes.length];
  }

  /**
   * Starts a mesh over {@code world}'s ranks.
   *
   * @param world the communicator whose ranks the mesh lays out; its size must be the product of the axes'
   * @return a builder; add the axes outermost first
   */
  public static Builder builder(Communicator world) {
    return new Builder(Objects.requireNonNull(world, "world"));
  }

  /** Adds a mesh's axes, outermost first, then {@link #build()}s it. Used once, by one thread. */
  public static final class Builder {
    private final Communicator world;
    private final List<String> names = new ArrayList<>();
    private final List<Integer> sizes = new ArrayList<>();

    private Builder(Communicator world) {
      this.world = world;
    }

    /**
     * Adds an axis; the first added varies slowest.
     *
     * @param name a Java identifier (its characters are checked), unique in the mesh, not {@code rank} or
     *     {@code ranks}
     * @param size the number of coordinates along it, {@code >= 1}
     * @return this builder
     * @throws IllegalArgumentException for a bad name or size, naming the axes so far and the world size
     */
    public Builder axis(String name, int size) {
      Objects.requireNonNull(name, "name");
      String problem = null;
      if (!isIdentifier(name)) {
        problem = "axis name '" + name + "' is not a Java identifier";
      } else if (name.equals("rank") || name.equals("ranks")) {
        problem = "axis name '" + name + "' is reserved (rank and ranks are the peer and shape keywords)";
      } else if (names.contains(name)) {
        problem = "axis '" + name + "' is declared twice";
      } else if (size < 1) {
        problem = "axis '" + name + "' has size " + size + "; every axis has at least 1 coordinate";
      }
      if (problem != null) {
        throw new IllegalArgumentException("mesh over a world of " + world.size() + " ranks, axes so far "
            + describe(names, sizes.stream().mapToInt(Integer::intValue).toArray()) + ": " + problem);
      }
      names.add(name);
      sizes.add(size);
      return this;
    }

    /**
     * Builds the mesh: collective over the world (every rank calls it). Compares every rank's mesh, then
     * splits the world once per axis.
     *
     * @return the mesh, owning the communicators it made
     * @throws IllegalArgumentException if there are no axes or their sizes do not multiply to the world size
     * @throws DisagreementException on every rank, if the ranks built different meshes
     */
    public Mesh build() {
      int[] sizeArray = sizes.stream().mapToInt(Integer::intValue).toArray();
      long product = 1;
      for (int size : sizeArray) {
        product *= size;
      }
      if (names.isEmpty() || product != world.size()) {
        throw new IllegalArgumentException("mesh " + describe(names, sizeArray) + ": the axes' sizes multiply to "
            + (names.isEmpty() ? "nothing (no axes)" : product) + ", but the world has " + world.size()
            + " ranks; give axes whose sizes multiply to " + world.size());
      }
      Mesh mesh = new Mesh(world, names, sizeArray);
      if (world instanceof AgreementChecked checked) { // every backend's, built on the SPI
        checked.compareMeshes(mesh.description); // before any split: ranks that differ fail here
      }
      boolean built = false;
      try {
        for (int axis = 0; axis < sizeArray.length; axis++) {
          mesh.axisGroups[axis] = world.split(mesh.colorWithout(new int[] {axis}), mesh.coordinates[axis],
              "axis " + names.get(axis) + " of mesh " + mesh.description);
        }
        built = true;
        return mesh;
      } finally {
        if (!built) {
          mesh.close();
        }
      }
    }
  }

  /**
   * The group of ranks that differ from this one only along {@code name}; this rank's rank there is its
   * {@linkplain #coordinate coordinate} along the axis.
   *
   * @param name an axis of this mesh
   * @return the axis's communicator, owned by the mesh
   * @throws IllegalArgumentException if the mesh has no such axis
   */
  public Communicator axis(String name) {
    checkOpen();
    return axisGroups[index(name)];
  }

  /**
   * The group of ranks that differ from this one only along the given axes, ranked row-major over them in
   * the order given. One axis is {@link #axis(String)}; two or more make a new group on first use, which is
   * collective: every rank of the world asks for the same axes, in the same order (then it is cached).
   *
   * @param names axes of this mesh, at least one, each once
   * @return the group's communicator, owned by the mesh
   * @throws IllegalArgumentException for no axes, an unknown or repeated axis
   */
  public Communicator axes(String... names) {
    checkOpen();
    if (names.length == 0) {
      throw new IllegalArgumentException("mesh " + description + ": axes() needs at least one axis name");
    }
    int[] indices = new int[names.length];
    for (int i = 0; i < names.length; i++) {
      indices[i] = index(names[i]);
      for (int j = 0; j < i; j++) {
        if (indices[j] == indices[i]) {
          throw new IllegalArgumentException("mesh " + description + ": axis '" + names[i] + "' is named twice in axes("
              + String.join(", ", names) + ")");
        }
      }
    }
    if (names.length == 1) {
      return axisGroups[indices[0]];
    }
    List<String> key = List.of(names);
    Communicator group = multiAxisGroups.get(key);
    if (group == null) {
      int rankInGroup = 0;
      for (int index : indices) {
        rankInGroup = rankInGroup * sizes[index] + coordinates[index];
      }
      group = world.split(colorWithout(indices), rankInGroup,
          "axes " + String.join(" x ", names) + " of mesh " + description);
      multiAxisGroups.put(key, group);
    }
    return group;
  }

  /**
   * This rank's coordinate along an axis.
   *
   * @param name an axis of this mesh
   * @return the coordinate, in {@code [0, size(name))}
   * @throws IllegalArgumentException if the mesh has no such axis
   */
  public int coordinate(String name) {
    return coordinates[index(name)];
  }

  /**
   * The number of coordinates along an axis.
   *
   * @param name an axis of this mesh
   * @return its size
   * @throws IllegalArgumentException if the mesh has no such axis
   */
  public int size(String name) {
    return sizes[index(name)];
  }

  /**
   * {@return whether the mesh has an axis named {@code name}}
   *
   * @param name an axis name
   */
  public boolean hasAxis(String name) {
    return names.contains(name);
  }

  /** {@return the axes' names, outermost (slowest varying) first} */
  public List<String> axisNames() {
    return names;
  }

  /** {@return the communicator the mesh lays out (not owned by the mesh)} */
  public Communicator world() {
    return world;
  }

  /** Closes the communicators the mesh made (not the world); idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    RuntimeException failure = null;
    List<Communicator> made = new ArrayList<>(multiAxisGroups.values());
    made.addAll(Arrays.asList(axisGroups));
    for (Communicator group : made) {
      if (group == null) {
        continue;
      }
      try {
        group.close();
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    multiAxisGroups.clear();
    if (failure != null) {
      throw failure;
    }
  }

  /** {@code Mesh[dp=2, tp=4; rank 5 at dp 1, tp 1]}. */
  @Override
  public String toString() {
    StringBuilder at = new StringBuilder();
    for (int i = 0; i < names.size(); i++) {
      at.append(i == 0 ? "" : ", ").append(names.get(i)).append(' ').append(coordinates[i]);
    }
    return "Mesh" + description + "; rank " + world.rank() + " at " + at + (closed ? ", closed" : "") + "]";
  }

  /** The color of this rank's group along {@code axes}: its rank with those coordinates set to 0. */
  private int colorWithout(int[] axes) {
    int color = world.rank();
    for (int axis : axes) {
      color -= coordinates[axis] * strides[axis];
    }
    return color;
  }

  private int index(String name) {
    int index = names.indexOf(name);
    if (index < 0) {
      throw new IllegalArgumentException("mesh " + description + " has no axis '" + name + "'; its axes are " + names);
    }
    return index;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("mesh " + description + " is closed");
    }
  }

  /** {@code [dp=2, tp=4]}. */
  private static String describe(List<String> names, int[] sizes) {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < names.size(); i++) {
      s.append(i == 0 ? "" : ", ").append(names.get(i)).append('=').append(sizes[i]);
    }
    return s.append(']').toString();
  }

  private static boolean isIdentifier(String name) {
    if (name.isEmpty() || !Character.isJavaIdentifierStart(name.codePointAt(0))) {
      return false;
    }
    for (int i = Character.charCount(name.codePointAt(0)); i < name.length(); i += Character.charCount(name.codePointAt(i))) {
      if (!Character.isJavaIdentifierPart(name.codePointAt(i))) {
        return false;
      }
    }
    return true;
  }
}
