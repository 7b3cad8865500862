package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.timing.SteadyState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The command line after the subcommand: {@code --name value} options and {@code --flag} switches. Each
 * getter consumes its option, so that {@link #finish()} can reject options nobody asked for.
 */
final class Args {
  private final Map<String, String> values = new LinkedHashMap<>();
  private final Set<String> used = new HashSet<>();

  private Args() {}

  /** Parses {@code args}; {@code switches} are the options that take no value. */
  static Args parse(List<String> args, Set<String> switches) {
    Args parsed = new Args();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (!arg.startsWith("--")) {
        throw new UsageException("unexpected argument '" + arg + "'");
      }
      String name = arg.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else if (switches.contains(name)) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args.get(++i);
      } else {
        throw new UsageException(arg + " needs a value");
      }
      if (parsed.values.put(name, value) != null) {
        throw new UsageException("--" + name + " given twice");
      }
    }
    return parsed;
  }

  String string(String name, String fallback) {
    used.add(name);
    return values.getOrDefault(name, fallback);
  }

  boolean flag(String name) {
    return Boolean.parseBoolean(string(name, "false"));
  }

  int integer(String name, int fallback, int min) {
    String value = string(name, null);
    if (value == null) {
      return fallback;
    }
    int parsed;
    try {
      parsed = Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " takes a whole number, not '" + value + "'");
    }
    if (parsed < min) {
      throw new UsageException("--" + name + " must be at least " + min + ", was " + parsed);
    }
    return parsed;
  }

  /** A decimal number of at least {@code min}. */
  double decimal(String name, double fallback, double min) {
    String value = string(name, null);
    if (value == null) {
      return fallback;
    }
    double parsed;
    try {
      parsed = Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " takes a number, not '" + value + "'");
    }
    if (!(parsed >= min) || Double.isInfinite(parsed)) {
      throw new UsageException("--" + name + " must be a number of at least " + min + ", was " + value);
    }
    return parsed;
  }

  /**
   * The warm-up: {@code --warmup auto} (the default: {@link SteadyState}'s rule, with {@code --warmup-min S},
   * {@code --warmup-max S}, {@code --warmup-window K}, {@code --warmup-tolerance F}) or {@code --warmup N}, exactly
   * N calls (the old way, no rule).
   */
  SteadyState.Rule warmUp() {
    String spec = string("warmup", "auto");
    SteadyState.Rule d = SteadyState.Rule.DEFAULT;
    double min = decimal("warmup-min", d.minNanos() / 1e9, 0);
    double max = decimal("warmup-max", d.maxNanos() / 1e9, 0);
    int window = integer("warmup-window", d.window(), 1);
    double tolerance = decimal("warmup-tolerance", d.tolerance(), 0);
    if (spec.equals("auto")) {
      if (max < min) {
        throw new UsageException("--warmup-max " + max + " is less than --warmup-min " + min);
      }
      return SteadyState.Rule.steady(window, tolerance, min, max);
    }
    for (String rule : new String[] {"warmup-min", "warmup-max", "warmup-window", "warmup-tolerance"}) {
      if (values.containsKey(rule)) {
        throw new UsageException("--" + rule + " goes with --warmup auto, not with a fixed --warmup " + spec);
      }
    }
    try {
      long calls = Long.parseLong(spec);
      if (calls < 0) {
        throw new UsageException("--warmup must be auto or at least 0, was " + spec);
      }
      return SteadyState.Rule.fixed(calls);
    } catch (NumberFormatException e) {
      throw new UsageException("--warmup is auto (warm up to the steady state) or a number of calls, not '" + spec + "'");
    }
  }

  /** A comma-separated list of whole numbers, each at least {@code min}. */
  List<Integer> integers(String name, String fallback, int min) {
    List<Integer> out = new ArrayList<>();
    for (String part : string(name, fallback).split(",")) {
      try {
        int v = Integer.parseInt(part.trim());
        if (v < min) {
          throw new UsageException("--" + name + " values must be at least " + min + ", was " + v);
        }
        out.add(v);
      } catch (NumberFormatException e) {
        throw new UsageException("--" + name + " takes whole numbers separated by commas, not '" + part + "'");
      }
    }
    return out;
  }

  /** A size in bytes: {@code 8}, {@code 64K}, {@code 64M}, {@code 1G} (powers of 1024, as nccl-tests). */
  long size(String name, String fallback) {
    String value = string(name, fallback);
    return parseSize("--" + name, value);
  }

  static long parseSize(String what, String value) {
    String v = value.trim().toUpperCase(Locale.ROOT);
    if (v.endsWith("B")) {
      v = v.substring(0, v.length() - 1);
    }
    if (v.endsWith("I")) { // 64MiB
      v = v.substring(0, v.length() - 1);
    }
    long unit = 1;
    if (!v.isEmpty()) {
      switch (v.charAt(v.length() - 1)) {
        case 'K' -> unit = 1L << 10;
        case 'M' -> unit = 1L << 20;
        case 'G' -> unit = 1L << 30;
        default -> {}
      }
    }
    if (unit != 1) {
      v = v.substring(0, v.length() - 1);
    }
    try {
      long n = Long.parseLong(v);
      if (n <= 0) {
        throw new UsageException(what + " must be positive, was " + value);
      }
      return Math.multiplyExact(n, unit);
    } catch (ArithmeticException e) {
      throw new UsageException(what + " " + value + " is too large");
    } catch (NumberFormatException e) {
      throw new UsageException(what + " is a size such as 8, 64K, 64M or 1G, not '" + value + "'");
    }
  }

  String backend() {
    String backend = string("backend", "local").toLowerCase(Locale.ROOT);
    if (!backend.equals("local") && !backend.equals("nccl")) {
      throw new UsageException("--backend is local or nccl, not '" + backend + "'");
    }
    return backend;
  }

  DataType dataType(String fallback) {
    return Names.dataType(string("type", fallback));
  }

  ReduceOp op(String fallback) {
    return Names.op(string("op", fallback));
  }

  /** Rejects every option that no getter asked for (typos, options of another subcommand). */
  void finish() {
    for (String name : values.keySet()) {
      if (!used.contains(name)) {
        throw new UsageException("unknown option --" + name);
      }
    }
  }

  /** A mistake on the command line: one line, exit status 2. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
