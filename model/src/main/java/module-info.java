/** What the processor and the runtime both know: the collectives, their rules, the rule ids. */
module dev.commplan.model {
  exports dev.commplan.model;
}
