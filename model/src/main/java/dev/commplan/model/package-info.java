/**
 * What the annotation processor and the runtime both know, in one place: the collectives ({@link
 * dev.commplan.model.Collective}) with their count rules and in-place meaning, the element types ({@link
 * dev.commplan.model.ElementType}), the rule on AVG over fp8 ({@link dev.commplan.model.Fp8AverageRule}), and
 * the ids of the rules ({@link dev.commplan.model.RuleId}) that both report. Depends on nothing.
 */
package dev.commplan.model;
