package dev.commplan.runtime.nccl;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class that needs a GPU, NCCL and the CUDA runtime: tagged {@code gpu}, and skipped (not
 * failed) where any of them is missing, with the reason as the skip message and printed once to stderr.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu")
@ExtendWith(NcclAvailableCondition.class)
public @interface NcclGpuTest {}
