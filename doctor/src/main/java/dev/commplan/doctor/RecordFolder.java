package dev.commplan.doctor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Reads one run's records from a folder: every file whose name ends in {@code .json} (a writer's
 * half-written {@code .json.tmp} is not one), each a rank's {@link FlightRecord}, and checks that together
 * they are one run: one job, one backend, one world size, and one file for every rank from 0 to the world
 * size less one. Anything else is a {@link BadInputException} naming the file or the folder.
 */
final class RecordFolder {
  private RecordFolder() {}

  /**
   * One run's records.
   *
   * @param folder where they were read from
   * @param job the run's id
   * @param backend the backend's name
   * @param ranks the records, one a rank, by world rank
   */
  record Run(Path folder, String job, String backend, List<FlightRecord> ranks) {
    int worldSize() {
      return ranks.size();
    }
  }

  static Run read(Path folder) throws BadInputException {
    if (!Files.exists(folder)) {
      throw new BadInputException(folder + ": no such folder");
    }
    if (!Files.isDirectory(folder)) {
      throw new BadInputException(folder + ": not a folder (give the folder that holds the ranks' .json files)");
    }
    List<Path> files;
    try (Stream<Path> listing = Files.list(folder)) {
      files = listing.filter(p -> p.getFileName().toString().endsWith(".json") && Files.isRegularFile(p))
          .sorted(Comparator.comparing(p -> p.getFileName().toString())).toList();
    } catch (IOException e) {
      throw new BadInputException(folder + ": cannot list it: " + e.getMessage());
    }
    if (files.isEmpty()) {
      throw new BadInputException(folder + ": no flight records here (no .json file)");
    }
    List<FlightRecord> records = new ArrayList<>();
    for (Path file : files) {
      records.add(RecordParser.parse(file, text(file)));
    }
    return oneRun(folder, records);
  }

  private static String text(Path file) throws BadInputException {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new BadInputException(file + ": cannot read it: " + e.getMessage());
    }
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new BadInputException(file + ": not valid JSON: the file is not UTF-8 text");
    }
  }

  private static Run oneRun(Path folder, List<FlightRecord> records) throws BadInputException {
    FlightRecord first = records.get(0);
    TreeMap<Integer, FlightRecord> byRank = new TreeMap<>();
    for (FlightRecord r : records) {
      if (!r.job().equals(first.job())) {
        throw new BadInputException(r.file() + ": job " + Words.quote(r.job()) + ", but " + first.file() + " is job "
            + Words.quote(first.job()) + " (one folder must hold the files of one run)");
      }
      if (r.worldSize() != first.worldSize()) {
        throw new BadInputException(r.file() + ": worldSize " + r.worldSize() + ", but " + first.file() + " says "
            + first.worldSize());
      }
      if (!r.backend().equals(first.backend())) {
        throw new BadInputException(r.file() + ": backend " + Words.quote(r.backend()) + ", but " + first.file()
            + " says " + Words.quote(first.backend()));
      }
      FlightRecord before = byRank.putIfAbsent(r.worldRank(), r);
      if (before != null) {
        throw new BadInputException(r.file() + ": rank " + r.worldRank() + " again (" + before.file()
            + " is rank " + r.worldRank() + " too)");
      }
    }
    List<Integer> missing = new ArrayList<>();
    for (int rank = 0; rank < first.worldSize(); rank++) {
      if (!byRank.containsKey(rank)) {
        missing.add(rank);
      }
    }
    if (!missing.isEmpty()) {
      throw new BadInputException(folder + ": no file for " + Words.ranks(missing) + " (job " + Words.quote(first.job())
          + " has " + first.worldSize() + " ranks; files for " + Words.ranks(byRank.keySet())
          + "; a rank killed before it could write leaves none)");
    }
    return new Run(folder, first.job(), first.backend(), List.copyOf(byRank.values()));
  }
}
