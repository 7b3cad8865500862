package dev.commplan.runtime.local;

import dev.commplan.runtime.DataType;
import java.lang.foreign.MemorySegment;

/**
 * The element work of the collectives, NCCL's meaning, run by every participating rank's stream worker
 * on its own slice of the elements once all ranks have arrived. (Sends and receives are not collectives
 * here: {@link LocalTransfers}.)
 *
 * <p>Each rank's slice is 1/n of the element range. For AllReduce that makes a reduce-scatter and an
 * all-gather in one pass over memory: the rank reduces its slice straight from every rank's send buffer,
 * a chunk at a time ({@link KernelScratch#CHUNK_BYTES}), and copies each reduced chunk into every rank's
 * receive buffer, so every input is read once and every output written once. Reductions combine the
 * ranks' values in rank order 0, 1, ..., n-1, whoever computes the slice, so every rank receives bitwise
 * the same result; the arithmetic is {@link LocalReductions}'. The copies (AllGather, Broadcast, Gather,
 * Scatter, AllToAll) are one {@code MemorySegment.copy} per contiguous run. Reduce and Gather write the
 * root's receive buffer only, and Scatter reads the root's send buffer only, as NCCL.
 *
 * <p>Aliasing (in place, NCCL's offsets): every element position of a receive buffer that is also a
 * send position is written only by the rank whose slice it belongs to, which reads the whole chunk of
 * every input before writing any of it. Copies whose source and destination are the same bytes (the
 * in-place rank's own slice) are skipped.
 */
final class LocalKernels {
  private LocalKernels() {}

  /** Runs {@code rank}'s share of the collective described by {@code calls} (one per rank, all matching). */
  static void run(LocalCollective[] calls, int rank, KernelScratch scratch) {
    LocalCollective first = calls[0];
    int ranks = calls.length;
    long elements = switch (first.collective) {
      case ALL_REDUCE, BROADCAST, REDUCE -> first.count;
      case ALL_GATHER, REDUCE_SCATTER, GATHER, SCATTER -> first.count * ranks;
      case ALL_TO_ALL -> first.count * ranks * ranks; // every rank's whole receive buffer
      case SEND, RECV -> throw new AssertionError(first.collective + " is not a collective here");
    };
    // An even split of the element range; the slices of consecutive ranks touch, so all of it is covered.
    long from = sliceStart(elements, rank, ranks);
    long to = sliceStart(elements, rank + 1, ranks);
    switch (first.collective) {
      case ALL_REDUCE -> allReduce(calls, from, to, scratch);
      case REDUCE_SCATTER -> reduceScatter(calls, from, to, scratch);
      case ALL_GATHER -> allGather(calls, from, to);
      case BROADCAST -> broadcast(calls, from, to);
      case REDUCE -> reduce(calls, from, to, scratch);
      case GATHER -> gather(calls, from, to);
      case SCATTER -> scatter(calls, from, to);
      case ALL_TO_ALL -> allToAll(calls, from, to);
      case SEND, RECV -> throw new AssertionError(first.collective);
    }
  }

  /** floor(elements · rank / ranks), computed without overflowing for any element count. */
  static long sliceStart(long elements, int rank, int ranks) {
    return elements / ranks * rank + elements % ranks * rank / ranks;
  }

  /** Each chunk is reduced once and copied to every rank's receive buffer. */
  private static void allReduce(LocalCollective[] calls, long from, long to, KernelScratch scratch) {
    DataType type = calls[0].type;
    int size = type.byteSize();
    int chunk = KernelScratch.chunkElements(type);
    scratch.prepare(type);
    for (long at = from; at < to; at += chunk) {
      int length = (int) Math.min(chunk, to - at);
      LocalReductions.reduceChunk(calls, at * size, length, scratch);
      for (LocalCollective call : calls) {
        LocalReductions.storeChunk(call.type, scratch, call.recv.segment(), call.recvOffset + at * size, length);
      }
    }
  }

  /** AllReduce's reduction, stored into the root's receive buffer only. */
  private static void reduce(LocalCollective[] calls, long from, long to, KernelScratch scratch) {
    DataType type = calls[0].type;
    int size = type.byteSize();
    int chunk = KernelScratch.chunkElements(type);
    scratch.prepare(type);
    LocalCollective root = calls[calls[0].root];
    for (long at = from; at < to; at += chunk) {
      int length = (int) Math.min(chunk, to - at);
      LocalReductions.reduceChunk(calls, at * size, length, scratch);
      LocalReductions.storeChunk(root.type, scratch, root.recv.segment(), root.recvOffset + at * size, length);
    }
  }

  private static void reduceScatter(LocalCollective[] calls, long from, long to, KernelScratch scratch) {
    long count = calls[0].count;
    DataType type = calls[0].type;
    int size = type.byteSize();
    int chunk = KernelScratch.chunkElements(type);
    scratch.prepare(type);
    long at = from;
    while (at < to) {
      // Element `at` of every send buffer reduces into element at % count of rank (at / count)'s recv.
      int target = (int) (at / count);
      long inTarget = at % count;
      int length = (int) Math.min(chunk, Math.min(to - at, count - inTarget));
      LocalReductions.reduceChunk(calls, at * size, length, scratch);
      LocalCollective out = calls[target];
      LocalReductions.storeChunk(out.type, scratch, out.recv.segment(), out.recvOffset + inTarget * size, length);
      at += length;
    }
  }

  private static void allGather(LocalCollective[] calls, long from, long to) {
    long count = calls[0].count;
    int size = calls[0].type.byteSize();
    long at = from;
    while (at < to) {
      // Element `at` of every recv buffer is element at % count of rank (at / count)'s send buffer.
      LocalCollective source = calls[(int) (at / count)];
      long inSource = at % count;
      long length = Math.min(to - at, count - inSource);
      copyToAll(calls, source.send.segment(), source.sendOffset + inSource * size, at * size, length * size);
      at += length;
    }
  }

  private static void broadcast(LocalCollective[] calls, long from, long to) {
    if (from == to) {
      return;
    }
    LocalCollective source = calls[calls[0].root];
    int size = calls[0].type.byteSize();
    copyToAll(calls, source.send.segment(), source.sendOffset + from * size, from * size, (to - from) * size);
  }

  /** Element {@code at} of the root's receive buffer is element at % count of rank (at / count)'s send buffer. */
  private static void gather(LocalCollective[] calls, long from, long to) {
    long count = calls[0].count;
    int size = calls[0].type.byteSize();
    LocalCollective root = calls[calls[0].root];
    long at = from;
    while (at < to) {
      LocalCollective source = calls[(int) (at / count)];
      long inSource = at % count;
      long length = Math.min(to - at, count - inSource);
      copy(source.send.segment(), source.sendOffset + inSource * size, root.recv.segment(), root.recvOffset + at * size,
          length * size);
      at += length;
    }
  }

  /** Element {@code at} of the root's send buffer goes to element at % count of rank (at / count)'s receive buffer. */
  private static void scatter(LocalCollective[] calls, long from, long to) {
    long count = calls[0].count;
    int size = calls[0].type.byteSize();
    LocalCollective root = calls[calls[0].root];
    long at = from;
    while (at < to) {
      LocalCollective target = calls[(int) (at / count)];
      long inTarget = at % count;
      long length = Math.min(to - at, count - inTarget);
      copy(root.send.segment(), root.sendOffset + at * size, target.recv.segment(), target.recvOffset + inTarget * size,
          length * size);
      at += length;
    }
  }

  /**
   * The element range runs over every rank's receive buffer in turn: element {@code at} is element j = at
   * % (ranks·count) of rank t = at / (ranks·count)'s receive buffer, which is element t·count + j % count
   * of rank (j / count)'s send buffer. Out of place only, so no copy reads what another writes.
   */
  private static void allToAll(LocalCollective[] calls, long from, long to) {
    long count = calls[0].count;
    long perRank = count * calls.length;
    int size = calls[0].type.byteSize();
    long at = from;
    while (at < to) {
      int t = (int) (at / perRank);
      LocalCollective target = calls[t];
      long j = at % perRank;
      LocalCollective source = calls[(int) (j / count)];
      long inSlice = j % count;
      long length = Math.min(to - at, count - inSlice);
      long sendElement = t * count + inSlice;
      copy(source.send.segment(), source.sendOffset + sendElement * size, target.recv.segment(),
          target.recvOffset + j * size, length * size);
      at += length;
    }
  }

  /** Copies {@code bytes}, unless source and destination are the same bytes (an in-place rank's own slice). */
  private static void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
    if (dst != src || dstOffset != srcOffset) {
      MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
    }
  }

  /** Copies {@code bytes} from {@code src} to byte {@code recvByte} of every rank's receive region. */
  private static void copyToAll(LocalCollective[] calls, MemorySegment src, long srcOffset, long recvByte, long bytes) {
    for (LocalCollective call : calls) {
      MemorySegment dst = call.recv.segment();
      long dstOffset = call.recvOffset + recvByte;
      if (dst != src || dstOffset != srcOffset) {
        MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
      }
    }
  }
}
