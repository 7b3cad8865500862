package dev.commplan.runtime.nccl;

import dev.commplan.runtime.CommPlanException;

/**
 * A CUDA runtime function returned an error. Carries the function's name, the {@code cudaError_t} (as
 * {@link CudaError} and as the raw code), and the runtime's name and text for it ({@code
 * cudaGetErrorName}, {@code cudaGetErrorString}).
 */
public class CudaException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /** The C function that failed ({@link #function()}). */
  private final String function;
  /** The error ({@link #error()}). */
  private final CudaError error;
  /** The code as the runtime returned it ({@link #rawCode()}). */
  private final int rawCode;
  /** The runtime's name for the code ({@link #cudaName()}). */
  private final String cudaName;
  /** The runtime's text for the code ({@link #errorString()}). */
  private final String errorString;

  /**
   * Creates the exception; the message names the function, the code and the runtime's name and text.
   *
   * @param function the C function that failed: {@code cudaMalloc}
   * @param rawCode the {@code cudaError_t} it returned
   * @param cudaName {@code cudaGetErrorName(rawCode)}, or null where it could not be read
   * @param errorString {@code cudaGetErrorString(rawCode)}, or null where it could not be read
   */
  public CudaException(String function, int rawCode, String cudaName, String errorString) {
    super(message(function, rawCode, cudaName, errorString));
    this.function = function;
    this.error = CudaError.of(rawCode);
    this.rawCode = rawCode;
    this.cudaName = cudaName;
    this.errorString = errorString;
  }

  static String message(String function, int rawCode, String cudaName, String errorString) {
    StringBuilder sb = new StringBuilder().append(function).append(" failed: ")
        .append(cudaName == null ? "cudaError_t" : cudaName).append(" (").append(rawCode).append(')');
    if (errorString != null && !errorString.isBlank()) {
      sb.append(": ").append(errorString.strip());
    }
    return sb.toString();
  }

  /** {@return the C function that failed: {@code cudaMalloc}} */
  public String function() {
    return function;
  }

  /** {@return the error, {@link CudaError#OTHER} for a code not named there} */
  public CudaError error() {
    return error;
  }

  /** {@return the code as the runtime returned it} */
  public int rawCode() {
    return rawCode;
  }

  /** {@return {@code cudaGetErrorName(code)}: {@code cudaErrorNoDevice}} */
  public String cudaName() {
    return cudaName;
  }

  /** {@return {@code cudaGetErrorString(code)}: {@code no CUDA-capable device is detected}} */
  public String errorString() {
    return errorString;
  }
}
