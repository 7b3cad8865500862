package dev.commplan.runtime.bootstrap;

import java.io.IOException;

/** A frame broke the protocol (bad magic, version, type, length, tag, sequence, shape); that connection is dropped. */
final class FrameException extends IOException {
  private static final long serialVersionUID = 1L;

  FrameException(String message) {
    super(message);
  }
}
