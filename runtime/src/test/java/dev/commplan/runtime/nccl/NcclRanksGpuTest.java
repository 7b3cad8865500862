package dev.commplan.runtime.nccl;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a GPU test class that runs at the world sizes of {@link GpuRanks} ({@code -Dcommplan.gpu.ranks}):
 * {@link NcclGpuTest} (tagged {@code gpu}, skipped without a GPU), and skipped with the reasons where none of
 * those sizes runs here (more ranks than GPUs without NCCL 2.30 and the opt-in).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@NcclGpuTest
@ExtendWith(GpuRanks.Condition.class)
public @interface NcclRanksGpuTest {}
