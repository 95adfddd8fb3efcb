// Package sweep makes the decisions of a sweep job (type: sweep): which
// hyperparameters the next trial gets, which running trials an early
// termination policy cancels, and which trial is best. It decides only;
// the server's control loop submits, cancels and records the trials as
// child command jobs, so that the scheduler and autoscaler stay the only
// place that decides where and when anything runs.
//
// Everything here is a pure function of the sweep spec, a seed and the
// trials so far: a control loop that restarts draws the same trials
// again. Sampling:
//
//   - random draws each hyperparameter from its distribution. The
//     trial at index k (the k-th trial of the sweep, from 0) uses a
//     PCG generator seeded with (seed, k), so the same seed gives the
//     same trials whatever happened to the others.
//   - grid walks the cartesian product of the choice values, the
//     parameters in name order, the last name changing fastest, values
//     in the order written; it is done after the last combination or
//     at max_total_trials.
//   - bayesian is a tree-structured Parzen estimator (TPE; Bergstra et
//     al., "Algorithms for Hyper-Parameter Optimization", NeurIPS 2011).
//     The first BayesianStartup trials are random. After that the
//     completed trials' final metric splits them into the best quarter
//     ("good") and the rest ("bad"); for each hyperparameter,
//     independently, a density is fitted to each group (for uniform
//     and quniform a mixture of normals, one per observation, with
//     hyperopt's adaptive bandwidths and a broad prior component,
//     truncated to the bounds; for choice the counts plus one), 24
//     candidates are drawn from the good density and the one with the
//     largest ratio good/bad is taken. Azure ML allows bayesian
//     sampling only over choice, uniform and quniform, and without
//     early termination; shoal.NormalizeSweepSpec keeps those rules.
//
// Early termination follows Azure ML's documented policies (see
// Evaluate), and Best picks the completed trial whose last logged value
// of the primary metric is best.
package sweep
