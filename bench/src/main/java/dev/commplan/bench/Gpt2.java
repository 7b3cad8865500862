package dev.commplan.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * GPT-2 small's parameters (Hugging Face {@code gpt2}, as listed by {@code model.named_parameters()}):
 * the gradient set a data-parallel step all-reduces. 148 tensors, 124,439,808 parameters.
 */
final class Gpt2 {
  /** One parameter tensor: its name and shape. */
  record Tensor(String name, long[] shape) {
    long count() {
      long c = 1;
      for (long d : shape) {
        c *= d;
      }
      return c;
    }
  }

  static final int VOCAB = 50257;
  static final int CONTEXT = 1024;
  static final int EMBED = 768;
  static final int LAYERS = 12;

  static final List<Tensor> TENSORS = tensors();
  static final long PARAMETERS = TENSORS.stream().mapToLong(Tensor::count).sum();

  private Gpt2() {}

  private static List<Tensor> tensors() {
    List<Tensor> t = new ArrayList<>();
    t.add(new Tensor("wte.weight", new long[] {VOCAB, EMBED}));
    t.add(new Tensor("wpe.weight", new long[] {CONTEXT, EMBED}));
    for (int l = 0; l < LAYERS; l++) {
      String h = "h." + l + ".";
      t.add(new Tensor(h + "ln_1.weight", new long[] {EMBED}));
      t.add(new Tensor(h + "ln_1.bias", new long[] {EMBED}));
      t.add(new Tensor(h + "attn.c_attn.weight", new long[] {EMBED, 3 * EMBED}));
      t.add(new Tensor(h + "attn.c_attn.bias", new long[] {3 * EMBED}));
      t.add(new Tensor(h + "attn.c_proj.weight", new long[] {EMBED, EMBED}));
      t.add(new Tensor(h + "attn.c_proj.bias", new long[] {EMBED}));
      t.add(new Tensor(h + "ln_2.weight", new long[] {EMBED}));
      t.add(new Tensor(h + "ln_2.bias", new long[] {EMBED}));
      t.add(new Tensor(h + "mlp.c_fc.weight", new long[] {EMBED, 4 * EMBED}));
      t.add(new Tensor(h + "mlp.c_fc.bias", new long[] {4 * EMBED}));
      t.add(new Tensor(h + "mlp.c_proj.weight", new long[] {4 * EMBED, EMBED}));
      t.add(new Tensor(h + "mlp.c_proj.bias", new long[] {EMBED}));
    }
    t.add(new Tensor("ln_f.weight", new long[] {EMBED}));
    t.add(new Tensor("ln_f.bias", new long[] {EMBED}));
    return List.copyOf(t);
  }
}
