package dev.commplan.runtime.nccl.binding.raw;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * This process's environment as native libraries see it: libc's {@code getenv} and {@code setenv}. Java
 * cannot change the environment, and {@link System#getenv} is a copy the JDK takes once, when first asked;
 * NCCL reads its variables with {@code getenv} when it first needs each one, so a variable it must see is
 * set here, before then, and read here to know what NCCL will see.
 *
 * <p>{@code setenv} is not safe while another thread calls {@code getenv} (glibc); callers set a variable
 * once, before the library that reads it starts work.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class ProcessEnvironment {
  private ProcessEnvironment() {}

  private static final class getenv {
    static final MethodHandle H = NativeAccess.downcallToC("getenv", FunctionDescriptor.of(ADDRESS, ADDRESS));
  }

  private static final class setenv {
    static final MethodHandle H =
        NativeAccess.downcallToC("setenv", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
  }

  /**
   * {@code getenv(name)}: the variable's value now, or null where it is unset.
   *
   * @param name the variable
   */
  public static String get(String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment value = (MemorySegment) getenv.H.invokeExact(arena.allocateFrom(name));
      return NativeAccess.cString(value);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /**
   * {@code setenv(name, value, 1)}: sets (or replaces) the variable for this process and the libraries in it.
   *
   * @param name the variable
   * @param value its new value
   * @throws IllegalStateException if libc refuses (an invalid name, no memory)
   */
  public static void set(String name, String value) {
    int rc;
    try (Arena arena = Arena.ofConfined()) {
      rc = (int) setenv.H.invokeExact(arena.allocateFrom(name), arena.allocateFrom(value), 1);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
    if (rc != 0) {
      throw new IllegalStateException("setenv(\"" + name + "\", \"" + value + "\") failed (returned " + rc + ")");
    }
  }
}
