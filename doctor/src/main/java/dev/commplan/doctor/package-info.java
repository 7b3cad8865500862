/**
 * The CommPlan doctor, a command: {@link dev.commplan.doctor.Doctor} reads the flight records that every rank
 * of a run wrote (one JSON file a rank, docs/flight-records.md) and says per group where the ranks stopped
 * agreeing, which ranks never arrived, and which ranks the others waited for. Everything else in the package
 * is the command's insides.
 */
package dev.commplan.doctor;
