package dev.commplan.runtime.nccl;

import dev.commplan.runtime.CommPlanException;

/**
 * A CUDA runtime function returned an error. Carries the function's name, the {@code cudaError_t} (as
 * {@link CudaError} and as the raw code), and the runtime's name and text for it ({@code
 * cudaGetErrorName}, {@code cudaGetErrorString}).
 */
public class CudaException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  private final String function;
  private final CudaError error;
  private final int rawCode;
  private final String cudaName;
  private final String errorString;

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

  /** The C function that failed: {@code cudaMalloc}. */
  public String function() {
    return function;
  }

  /** The error, {@link CudaError#OTHER} for a code not named there. */
  public CudaError error() {
    return error;
  }

  /** The code as the runtime returned it. */
  public int rawCode() {
    return rawCode;
  }

  /** {@code cudaGetErrorName(code)}: {@code cudaErrorNoDevice}. */
  public String cudaName() {
    return cudaName;
  }

  /** {@code cudaGetErrorString(code)}: {@code no CUDA-capable device is detected}. */
  public String errorString() {
    return errorString;
  }
}
