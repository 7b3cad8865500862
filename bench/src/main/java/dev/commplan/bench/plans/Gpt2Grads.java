// Written by dev.commplan.bench.PlanSources (bench/src/main/java/dev/commplan/bench/PlanSources.java):
// do not edit; change the generator and run it again.
package dev.commplan.bench.plans;

import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * GPT-2 small's gradients (148 tensors, 124439808 parameters), all-reduced (sum) in place in step 0,
 * as a data-parallel step does. Fields are the parameter names with {@code .} replaced by {@code _}. The processor
 * generates {@code Gpt2GradsPlan}.
 */
@CommPlan
public final class Gpt2Grads {

  @AllReduce
  @Shape({"50257", "768"})
  F32Buffer wte_weight;

  @AllReduce
  @Shape({"1024", "768"})
  F32Buffer wpe_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h0_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h0_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h0_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h0_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h0_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h0_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h0_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h0_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h0_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h0_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h0_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h0_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h1_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h1_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h1_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h1_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h1_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h1_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h1_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h1_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h1_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h1_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h1_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h1_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h2_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h2_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h2_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h2_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h2_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h2_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h2_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h2_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h2_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h2_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h2_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h2_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h3_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h3_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h3_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h3_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h3_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h3_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h3_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h3_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h3_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h3_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h3_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h3_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h4_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h4_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h4_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h4_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h4_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h4_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h4_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h4_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h4_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h4_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h4_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h4_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h5_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h5_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h5_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h5_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h5_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h5_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h5_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h5_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h5_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h5_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h5_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h5_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h6_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h6_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h6_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h6_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h6_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h6_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h6_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h6_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h6_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h6_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h6_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h6_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h7_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h7_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h7_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h7_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h7_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h7_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h7_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h7_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h7_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h7_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h7_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h7_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h8_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h8_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h8_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h8_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h8_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h8_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h8_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h8_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h8_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h8_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h8_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h8_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h9_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h9_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h9_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h9_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h9_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h9_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h9_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h9_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h9_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h9_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h9_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h9_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h10_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h10_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h10_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h10_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h10_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h10_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h10_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h10_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h10_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h10_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h10_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h10_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h11_ln_1_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h11_ln_1_bias;

  @AllReduce
  @Shape({"768", "2304"})
  F32Buffer h11_attn_c_attn_weight;

  @AllReduce
  @Shape("2304")
  F32Buffer h11_attn_c_attn_bias;

  @AllReduce
  @Shape({"768", "768"})
  F32Buffer h11_attn_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h11_attn_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer h11_ln_2_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h11_ln_2_bias;

  @AllReduce
  @Shape({"768", "3072"})
  F32Buffer h11_mlp_c_fc_weight;

  @AllReduce
  @Shape("3072")
  F32Buffer h11_mlp_c_fc_bias;

  @AllReduce
  @Shape({"3072", "768"})
  F32Buffer h11_mlp_c_proj_weight;

  @AllReduce
  @Shape("768")
  F32Buffer h11_mlp_c_proj_bias;

  @AllReduce
  @Shape("768")
  F32Buffer ln_f_weight;

  @AllReduce
  @Shape("768")
  F32Buffer ln_f_bias;
}
