package dev.commplan.runtime.mpi;

import dev.commplan.runtime.Communicator;

/**
 * One process of {@link MpiProcessEndingTest}: the world is opened, then the process ends ({@code System.exit})
 * without closing it. A shutdown hook of the program's own waits until CommPlan's hook has closed the world,
 * then uses it, as a rank's thread still at work would, and prints what that use threw.
 */
public final class MpiEndingMain {
  private MpiEndingMain() {}

  public static void main(String[] args) {
    Communicator world = MpiBackend.world();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (!world.isClosed() && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      try {
        world.stream();
        System.out.println("ending: stream() returned");
      } catch (RuntimeException e) {
        System.out.println("ending: " + e.getClass().getSimpleName() + ": " + e.getMessage());
      }
      System.out.flush();
    }));
    System.exit(0);
  }
}
