/**
 * Several ranks on one GPU, which NCCL runs from 2.30 on when asked to: whether they may ({@link
 * GpuSharingRules}: the opt-in, the refusals and their messages, the CTA limit each rank is made with, the
 * process variables NCCL and CUDA read once), what was decided for a world and its splits ({@link
 * GpuSharing}), and, where the ranks are threads of this process and so share its CUDA context, the host
 * fences where a group's ranks meet ({@link SharedContextFences}).
 */
package dev.commplan.runtime.nccl.sharing;
