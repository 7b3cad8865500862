/**
 * Captured plans as CUDA graphs: a compiled schedule's steps captured into one graph ({@link GraphCapture},
 * in thread-local capture mode), and the executable graph a captured plan launches with one {@code
 * cudaGraphLaunch} ({@link CapturedGraph}), registered with every rank whose calls it holds so that it is
 * destroyed before their communicators.
 */
package dev.commplan.runtime.nccl.graphs;
